import { changeKey, idSlotSql } from '../keys.js';
import { COMMON_MIN, COMMON_SHARE } from '../searchCommon.js';
import type { SearchFilter, SearchHit, SearchKey, SearchOptions } from '../searchQueries.js';
import type { PostgresStore } from './client.js';
import { PARSED_LINE } from './searchFields.js';

/**
 * Reads of the search index on PostgreSQL (issue 15 Search, issue 17; docs/POSTGRES_PORT.md step 5):
 * the twins of db/searchQueries.ts `searchHits` and `searchCount`, with the same filter, hits, keys
 * and page order.
 * - Phrases: each FTS5 string of graphql/searchSyntax.ts (`"text"`, `"text"*`) becomes
 *   `phraseto_tsquery('simple', livefeed_search_words(text))`, the words in order, with `:*` on the
 *   last word of a prefix phrase; all must match (`&`). A phrase without a word for PostgreSQL's
 *   parser is left out (it has none to match); a search left without any finds nothing.
 * - Rank: for each ranking phrase, `ts_rank('{0.1, 0.3, 0.5, 1.0}', document, q, 1)` (weights of
 *   the migration: name, then sort name, aliases, disambiguation; divided by 1 + log of the
 *   document's length, as bm25 ranks a longer row lower) times the phrase's bm25 inverse document
 *   frequency ({@link phraseWeight}: rarer phrases weigh more), summed; higher better.
 *   The key's `bm25` holds its NEGATION as a `real`, so that the page order and the cursors are
 *   SQLite's: ascending `bm25`, then descending change id; the key compares as `real`, so a
 *   cursor's value finds its hit again.
 * - Common phrases (db/searchCommon.ts) apply here too, with the same thresholds: they must match
 *   but do not rank (`the beatles` ranks by beatles; their counts stop at the threshold), and a
 *   search whose phrases are all common reads newest first from the primary key, not a rank of
 *   every hit. The index size is PostgreSQL's estimate (`pg_class.reltuples`, kept by
 *   autovacuum), not a count of every row per request.
 */

/** A phrase as written by graphql/searchSyntax.ts: its text and whether its last word is a prefix. */
function parsePhrase(phrase: string): { text: string; prefix: boolean } {
  const match = /^"((?:[^"]|"")*)"(\*?)$/su.exec(phrase);
  if (!match) throw new Error(`not a search phrase: ${JSON.stringify(phrase)}`);
  return { text: match[1]!.replaceAll('""', '"'), prefix: match[2] === '*' };
}

// Each phrase's tsquery (NULL when it has no word), the entities it is found in, counted up to one
// past `above` (NULL without a probe), and `above` (the caller's threshold or the one of the
// estimated index size). $1 texts, $2 prefix flags, $3 threshold or NULL, $4 whether to probe
// (else no phrase ranks).
const TERMS = {
  name: 'livefeed_search_terms',
  text: `WITH above AS MATERIALIZED (SELECT coalesce($3::bigint, greatest(${COMMON_MIN},
      floor(greatest((SELECT reltuples FROM pg_class WHERE oid = 'search_index'::regclass), 0) / ${COMMON_SHARE}))::bigint) AS n)
    SELECT q.q::text, CASE WHEN $4::boolean THEN (SELECT count(*) FROM (SELECT 1 FROM search_index
      WHERE document @@ q.q LIMIT (SELECT n FROM above) + 1) x) END, (SELECT n FROM above)
    FROM unnest($1::text[], $2::boolean[]) WITH ORDINALITY AS u (text, prefix, n)
    CROSS JOIN LATERAL (SELECT phraseto_tsquery('simple', livefeed_search_words(u.text)) AS q) p
    CROSS JOIN LATERAL (SELECT CASE WHEN numnode(p.q) = 0 THEN NULL
      WHEN u.prefix THEN (p.q::text || ':*')::tsquery ELSE p.q END AS q) q
    ORDER BY u.n`,
  rowMode: 'array' as const,
};

/** The phrases that rank, each with its weight: rarer phrases weigh more, as in bm25. */
interface Ranking {
  queries: string[];
  weights: number[];
}

/**
 * The index size the weights assume: more entities than MusicBrainz has of any type. Not the
 * index's own size, an estimate that any ANALYZE (autovacuum's included) changes, which would move
 * every score between two pages of one search and make its cursors skip or repeat hits.
 */
const WEIGHT_INDEX_SIZE = 50_000_000;

/**
 * The weight of a phrase `found` entities hold: bm25's inverse document frequency in the form that
 * stays positive, ln(1 + (N − n + 0.5) / (n + 0.5)), with N = {@link WEIGHT_INDEX_SIZE}. It moves
 * only when the entities holding the phrase change, as SQLite's bm25 does.
 */
export function phraseWeight(found: number): number {
  return Math.log(1 + (WEIGHT_INDEX_SIZE - found + 0.5) / (found + 0.5));
}

/** The tsqueries of `filter`: all of them ANDed, and the ranking ones with their weights (undefined: none). */
async function tsqueries(
  store: PostgresStore,
  phrases: readonly string[],
  probe: boolean,
  commonAbove: number | undefined,
): Promise<{ match: string | undefined; ranking: Ranking | undefined }> {
  const parsed = phrases.map(parsePhrase);
  const { rows } = await store.pool.query<[string | null, string | null, string]>({
    ...TERMS,
    values: [parsed.map((p) => p.text), parsed.map((p) => p.prefix), commonAbove ?? null, probe],
  });
  const words = rows.filter(([q]) => q !== null) as [string, string | null, string][];
  const match = words.length === 0 ? undefined : words.map(([q]) => `(${q})`).join(' & ');
  const ranking: Ranking = { queries: [], weights: [] };
  for (const [q, found, above] of words) {
    if (found === null || Number(found) > Number(above)) continue;
    ranking.queries.push(q);
    ranking.weights.push(phraseWeight(Number(found)));
  }
  return { match, ranking: ranking.queries.length === 0 ? undefined : ranking };
}

const SLOTS = `($2::integer[] IS NULL OR ${idSlotSql('s.id')} = ANY ($2::integer[]))`;
// Each ranking phrase's ts_rank ($3) times its weight ($7), summed, as bm25 sums its phrases.
// Normalization 1 divides by 1 + log(the document's length), as bm25 ranks a longer row lower.
const RANK = `-(SELECT sum(t.w * ts_rank('{0.1, 0.3, 0.5, 1.0}', s.document, t.q, 1))
    FROM unnest($3::tsquery[], $7::real[]) AS t (q, w))`;

/** Page rows (`id`, `bm25`) joined to their lines, in page order, with the line's name. */
const withLines = (page: string) => `SELECT p.id, p.bm25, c.mbid, c.data,
    CASE WHEN jsonb_typeof(l.j -> 'name') = 'string' THEN l.j ->> 'name'
      WHEN coalesce(jsonb_typeof(l.j -> 'name'), 'null') = 'null' AND jsonb_typeof(l.j -> 'title') = 'string'
      THEN l.j ->> 'title' END
  FROM (${page}) p JOIN changes c ON c.id = p.id ${PARSED_LINE} ORDER BY p.bm25, p.id DESC`;

// $1 match, $2 slots, $3 ranking phrases, $4 cursor's bm25 (real, NULL: from the best), $5 its id,
// $6 limit, $7 the phrases' weights.
const RANKED = {
  name: 'livefeed_search_ranked',
  text: withLines(`SELECT id, bm25 FROM (
      SELECT s.id, (${RANK})::real AS bm25 FROM search_index s WHERE s.document @@ $1::tsquery AND ${SLOTS}
    ) r WHERE $4::real IS NULL OR bm25 > $4::real OR (bm25 = $4::real AND id < $5::bigint)
    ORDER BY bm25, id DESC LIMIT $6`),
  rowMode: 'array' as const,
};
// Every phrase common: newest change first, past the cursor's id ($3, NULL: from the newest).
const UNRANKED = {
  name: 'livefeed_search_unranked',
  text: withLines(`SELECT s.id, 0::real AS bm25 FROM search_index s WHERE s.document @@ $1::tsquery AND ${SLOTS}
    AND ($3::bigint IS NULL OR s.id < $3::bigint) ORDER BY s.id DESC LIMIT $4`),
  rowMode: 'array' as const,
};
const COUNT = {
  name: 'livefeed_search_count',
  text: `SELECT count(*) FROM search_index s WHERE s.document @@ $1::tsquery AND ${SLOTS}`,
  rowMode: 'array' as const,
};

/**
 * Up to `limit` hits of `filter` after `after` (from the best when undefined), best first; equal
 * scores newest change first: what db/searchQueries.ts `searchHits` answers on SQLite, with
 * `bm25` holding the negated `ts_rank` (see the module comment). Rejects with a RangeError for a
 * bad limit, an Error for a phrase not written by graphql/searchSyntax.ts, or the driver's error.
 */
export async function searchHitsPostgres(
  store: PostgresStore,
  filter: SearchFilter,
  after: SearchKey | undefined,
  limit: number,
  options: SearchOptions = {},
): Promise<SearchHit[]> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`page limit ${limit}`);
  const { match, ranking } = await tsqueries(store, filter.phrases, true, options.commonAbove);
  if (match === undefined) return [];
  let query: { name: string; text: string; rowMode: 'array'; values: unknown[] };
  if (ranking !== undefined) {
    // With common phrases, they must match but only the others rank (db/searchCommon.ts).
    const values = [
      match,
      filter.slots,
      ranking.queries,
      after?.bm25 ?? null,
      after?.id ?? null,
      limit,
      ranking.weights,
    ];
    query = { ...RANKED, values };
  } else if (after && after.bm25 > 0) {
    return []; // no hit scores above 0: nothing comes after such a cursor
  } else {
    // Every hit scores 0: after a hit of 0, the older ones; after a ranked hit, all of them.
    const seek = after?.bm25 === 0 ? after.id : null;
    query = { ...UNRANKED, values: [match, filter.slots, seek, limit] };
  }
  const { rows } = await store.pool.query<[number, number, string, string, string | null]>(query);
  return rows.map(([id, bm25, mbid, data, name]) => ({
    bm25,
    change: { id, ...changeKey(id), mbid, data: Buffer.from(data, 'utf8'), name },
  }));
}

/** Number of entities `filter` matches (every one); rejects as {@link searchHitsPostgres}. */
export async function searchCountPostgres(store: PostgresStore, filter: SearchFilter): Promise<number> {
  const { match } = await tsqueries(store, filter.phrases, false, undefined);
  if (match === undefined) return 0;
  const { rows } = await store.pool.query<[number]>({ ...COUNT, values: [match, filter.slots] });
  return rows[0]![0];
}

/** The statements above, for the plan test (test/db/postgres/searchPlans.test.ts). */
export const SEARCH_STATEMENTS = { TERMS, RANKED, UNRANKED, COUNT };

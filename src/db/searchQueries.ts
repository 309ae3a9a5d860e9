import type { Store } from './client.js';
import { idSlotSql } from './keys.js';
import { LazyChange } from './lazyChange.js';
import type { ChangeRow } from './queries.js';
import { rankingPhrases } from './searchCommon.js';
import { cachedStatement, limitClause } from './statements.js';

/**
 * Reads of the search index (db/searchIndex.ts). Ranking is FTS5's bm25 with column weights
 * {@link SEARCH_WEIGHTS} over the phrases that are not common (db/searchCommon.ts): common phrases
 * must match but count 0 in the score; when every phrase is common, every hit scores 0. bm25 is
 * negative, lower is better, so pages run by ascending bm25, then by descending rowid (the change
 * id: the newest version first) to end in a unique key. Nothing is cached between requests but
 * the index's size and which phrases are common, both read again after every commit: every read
 * sees the index as the last sync left it.
 */

/** bm25 weights of the columns name, sort_name, aliases, disambiguation: the name counts most. */
export const SEARCH_WEIGHTS = [10, 5, 3, 1] as const;

const BM25 = `bm25(search_index, ${SEARCH_WEIGHTS.join(', ')})`;

/** One search hit: the entity's current version and its bm25 value (negative, lower is better; 0 unranked). */
export interface SearchHit {
  bm25: number;
  change: ChangeRow;
}

/** Where a page starts: after the hit with this bm25 value and change id. */
export interface SearchKey {
  bm25: number;
  id: number;
}

/**
 * What to search: FTS5 phrases that must all match (each a quoted FTS5 string, `*` after a prefix,
 * as graphql/searchSyntax.ts writes them) and the entity type slots to keep (null: all).
 */
export interface SearchFilter {
  phrases: readonly string[];
  slots: number[] | null;
}

/** Options of {@link searchHits}; tests lower the threshold instead of indexing 500 entities. */
export interface SearchOptions {
  /** Above how many entities a phrase is common (default: db/searchCommon.ts, `commonAboveFor` the index's size). */
  commonAbove?: number;
}

/** The FTS5 MATCH expression of phrases: all of them (AND). */
const matchOf = (phrases: readonly string[]) => phrases.join(' ');

// `slots` as a JSON array (one statement for every filter); the slot is read from the change id.
const SLOTS = `(@slots IS NULL OR ${idSlotSql('rowid')} IN (SELECT value FROM json_each(@slots)))`;

// The line's name as `EntityChange.name` reads it (`name ?? title`, a string or null): stored by the
// ingest (`changes.name`, db/schema.ts: the text, or an empty BLOB for none), else (a line stored before
// migration 0011) taken out of the line by SQLite, which costs a parse of the line: about 5 µs for
// 3 KB, 0.1 ms of a page of 20 (bench/RESULTS.md), still a fifth of a JSON.parse in Node.
const LINE_NAME = `CASE WHEN c.name IS NULL THEN
    CASE WHEN json_type(c.data, '$.name') = 'text' THEN c.data ->> '$.name'
    WHEN coalesce(json_type(c.data, '$.name'), 'null') = 'null' AND json_type(c.data, '$.title') = 'text'
    THEN c.data ->> '$.title' END
  WHEN typeof(c.name) = 'text' THEN c.name END`;

/**
 * Page rows joined to their lines, in page order; `page` selects `id` and `bm25`. The lines stay in
 * SQLite (db/lazyChange.ts): a search box reads the names alone.
 */
const withLines = (page: string) => `SELECT p.id, p.bm25, c.mbid,
  ${LINE_NAME} AS name FROM (${page}) p JOIN changes c ON c.id = p.id ORDER BY p.bm25, p.id DESC`;

// After the cursor's hit: a higher bm25, or the same and an older change.
const AFTER_KEY = '(@bm25 IS NULL OR bm25 > @bm25 OR (bm25 = @bm25 AND id < @id))';

/**
 * Ranked: `ranking` phrases (all matching) scored by bm25. When `common` phrases are left out of
 * `ranking`, the hits are found first (the whole search, a pass of the index driven by its rarest
 * phrase) and bm25 is computed for them alone: `+rowid` keeps them a filter of the ranking pass,
 * not a lookup per hit, and the CTE keeps bm25 out of the WHERE clause.
 */
function rankedSql(common: boolean, limit: number): string {
  const page = (from: string) =>
    withLines(`SELECT id, bm25 FROM ${from} WHERE ${AFTER_KEY} ORDER BY bm25, id DESC ${limitClause(limit)}`);
  if (!common) {
    return page(
      `(SELECT rowid AS id, ${BM25} AS bm25 FROM search_index WHERE search_index MATCH @ranking AND ${SLOTS})`,
    );
  }
  return `WITH matched AS MATERIALIZED (
      SELECT rowid AS id FROM search_index WHERE search_index MATCH @match AND ${SLOTS}),
    ranked AS MATERIALIZED (SELECT rowid AS id, ${BM25} AS bm25 FROM search_index
      WHERE search_index MATCH @ranking AND +rowid IN matched)
    ${page('ranked')}`;
}

/** Unranked (every phrase common): newest change first, a seek past the cursor's rowid. */
function unrankedSql(seek: boolean, limit: number): string {
  return withLines(`SELECT rowid AS id, 0.0 AS bm25 FROM search_index WHERE search_index MATCH @match
    AND ${SLOTS}${seek ? ' AND rowid < @id' : ''} ORDER BY rowid DESC ${limitClause(limit)}`);
}

/**
 * Up to `limit` hits of `filter` after `after` (from the best when undefined), best first; equal
 * scores newest change first. The page is chosen from the index alone, then joined to its lines in
 * the same statement. See the module comment for what ranks.
 * @throws SqliteError when a phrase is not valid FTS5 syntax (callers build them escaped).
 */
export function searchHits(
  store: Store,
  filter: SearchFilter,
  after: SearchKey | undefined,
  limit: number,
  options: SearchOptions = {},
): SearchHit[] {
  const ranking = rankingPhrases(store, filter.phrases, options.commonAbove);
  const params = {
    match: matchOf(filter.phrases),
    slots: filter.slots && JSON.stringify(filter.slots),
    bm25: after?.bm25 ?? null,
    id: after?.id ?? null,
  };
  let sql: string;
  if (ranking.length > 0) {
    sql = rankedSql(ranking.length < filter.phrases.length, limit);
    Object.assign(params, { ranking: matchOf(ranking) });
  } else if (after && after.bm25 > 0) {
    return []; // no hit scores above 0: nothing comes after such a cursor
  } else {
    // Every hit scores 0: after a hit of 0, the older ones; after a ranked hit (a sync between
    // the pages made the phrases common), all of them.
    sql = unrankedSql(after?.bm25 === 0, limit);
  }
  const rows = cachedStatement(store, sql).all(params) as {
    id: number;
    bm25: number;
    mbid: string;
    name: string | null;
  }[];
  return rows.map(({ id, bm25, mbid, name }) => ({ bm25, change: new LazyChange(store, id, mbid, name) }));
}

/** Number of entities `filter` matches (every one: a pass over all of them). */
export function searchCount(store: Store, filter: SearchFilter): number {
  return cachedStatement(
    store,
    `SELECT count(*) FROM search_index WHERE search_index MATCH @match AND ${SLOTS}`,
  )
    .pluck()
    .get({ match: matchOf(filter.phrases), slots: filter.slots && JSON.stringify(filter.slots) }) as number;
}

import type { Store } from './client.js';
import { changeKey, idSlotSql } from './keys.js';
import type { ChangeRow } from './queries.js';
import { cachedStatement, limitClause } from './statements.js';

/**
 * Reads of the search index (db/searchIndex.ts). Ranking is FTS5's bm25 with column weights
 * {@link SEARCH_WEIGHTS}; bm25 is negative, lower is better, so pages run by ascending bm25, then
 * by rowid (the change id) to end in a unique key.
 */

/** bm25 weights of the columns name, sort_name, aliases, disambiguation: the name counts most. */
export const SEARCH_WEIGHTS = [10, 5, 3, 1] as const;

const BM25 = `bm25(search_index, ${SEARCH_WEIGHTS.join(', ')})`;

/** One search hit: the entity's current version and its bm25 value (negative, lower is better). */
export interface SearchHit {
  bm25: number;
  change: ChangeRow;
}

/** Where a page starts: after the hit with this bm25 value and change id. */
export interface SearchKey {
  bm25: number;
  id: number;
}

/** What to search: an FTS5 MATCH expression and the entity type slots to keep (null: all). */
export interface SearchFilter {
  match: string;
  slots: number[] | null;
}

// `slots` as a JSON array (one statement for every filter); the slot is read from the change id.
const MATCHES = `SELECT rowid AS id, ${BM25} AS bm25 FROM search_index WHERE search_index MATCH @match
  AND (@slots IS NULL OR ${idSlotSql('rowid')} IN (SELECT value FROM json_each(@slots)))`;

function bindings(filter: SearchFilter): { match: string; slots: string | null } {
  return { match: filter.match, slots: filter.slots && JSON.stringify(filter.slots) };
}

/**
 * Up to `limit` hits of `filter` after `after` (from the best when undefined), best first. The page
 * is chosen from the index alone, then joined to its lines: bm25 is computed once per matching entry.
 * @throws SqliteError when `filter.match` is not valid FTS5 syntax (callers build it escaped).
 */
export function searchHits(
  store: Store,
  filter: SearchFilter,
  after: SearchKey | undefined,
  limit: number,
): SearchHit[] {
  const sql = `SELECT p.id, p.bm25, c.mbid, CAST(c.data AS BLOB) AS data FROM (
      SELECT id, bm25 FROM (${MATCHES}) WHERE @bm25 IS NULL OR bm25 > @bm25 OR (bm25 = @bm25 AND id > @id)
      ORDER BY bm25, id ${limitClause(limit)}
    ) p JOIN changes c ON c.id = p.id ORDER BY p.bm25, p.id`;
  const rows = cachedStatement(store, sql).all({
    ...bindings(filter),
    bm25: after?.bm25 ?? null,
    id: after?.id ?? null,
  }) as { id: number; bm25: number; mbid: string; data: Buffer }[];
  return rows.map(({ id, bm25, mbid, data }) => ({ bm25, change: { id, ...changeKey(id), mbid, data } }));
}

/** Number of entities `filter` matches. */
export function searchCount(store: Store, filter: SearchFilter): number {
  return cachedStatement(store, `SELECT count(*) FROM (${MATCHES})`).pluck().get(bindings(filter)) as number;
}

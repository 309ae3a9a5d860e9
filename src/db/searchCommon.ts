import type { Store } from './client.js';
import { cachedStatement, limitClause } from './statements.js';

/**
 * Which phrases of a search rank (issue 15, README Search). FTS5 computes bm25 by first counting,
 * for each phrase, every entity it is found in, then scoring every entity that matches: a common
 * phrase (a word of one or two letters being typed, `the`) would cost a pass over a large part of
 * the index on every request. A phrase is common when it is found in more than
 * {@link COMMON_MIN} entities and in more than 1 in {@link COMMON_SHARE} of the entities indexed:
 * it must still match, but does not count in the score, as stop words elsewhere. Relative to the
 * index, so that a word means as much on a full copy as on a small one; ranking then costs up to
 * one bm25 per 2,000 entities indexed (about 1.5 µs each; bench/RESULTS.md).
 */

/** A phrase in this many entities or fewer always ranks. */
export const COMMON_MIN = 500;
/** A phrase in at most 1 in this many entities indexed ranks. */
export const COMMON_SHARE = 2000;

/**
 * What a connection knows of the index as of one `version` of the database: its size, and the
 * phrases already probed (`limit` and phrase → common). A search box asks the same few prefixes
 * over and over, and the common ones are the costly probes (each reads `limit + 1` entries):
 * remembered, a request of the benchmark's search mix costs 182 instead of 208 µs of CPU in process
 * (bench/RESULTS.md, 2026-11-24 19:00).
 */
interface IndexCounts {
  version: string;
  entities: number;
  common: Map<string, boolean>;
}

/** Phrase verdicts kept per connection; past it they are all dropped and probed again. */
const MAX_VERDICTS = 4096;

const counts = new WeakMap<Store['sqlite'], IndexCounts>();

/**
 * The index's counts as of now: read again only after a commit (this connection's or another's)
 * changed the database, so every read sees the index as the last sync left it.
 */
function countsOf(store: Store): IndexCounts {
  // data_version moves on another connection's commits, total_changes() on this one's.
  const version = cachedStatement(
    store,
    "SELECT (SELECT data_version FROM pragma_data_version()) || ':' || total_changes()",
  )
    .pluck()
    .get() as string;
  const cached = counts.get(store.sqlite);
  if (cached?.version === version) return cached;
  // A count of FTS5's docsize table, one row per entry: 40 µs for 1M.
  const entities = cachedStatement(store, 'SELECT count(*) FROM search_index_docsize')
    .pluck()
    .get() as number;
  const fresh = { version, entities, common: new Map<string, boolean>() };
  counts.set(store.sqlite, fresh);
  return fresh;
}

/** Entities in the search index (see {@link countsOf}: counted again only after a commit). */
export function indexedEntities(store: Store): number {
  return countsOf(store).entities;
}

/** Above how many entities a phrase is common in an index of `entities` entities. */
export function commonAboveFor(entities: number): number {
  return Math.max(COMMON_MIN, Math.floor(entities / COMMON_SHARE));
}

/**
 * The phrases of `phrases` found in at most `limit` entities (of any entity type, as bm25 counts
 * them), in their order: one read of at most `limit + 1` index entries per phrase not probed since
 * the last commit (see {@link IndexCounts}).
 */
export function rankingPhrases(store: Store, phrases: readonly string[], limit?: number): string[] {
  const known = countsOf(store);
  const above = limit ?? commonAboveFor(known.entities);
  const probe = cachedStatement(
    store,
    `SELECT count(*) FROM (SELECT 1 FROM search_index WHERE search_index MATCH ? ${limitClause(above + 1)})`,
  ).pluck();
  return phrases.filter((phrase) => {
    const key = `${above}:${phrase}`;
    let common = known.common.get(key);
    if (common === undefined) {
      common = (probe.get(phrase) as number) > above;
      if (known.common.size >= MAX_VERDICTS) known.common.clear();
      known.common.set(key, common);
    }
    return !common;
  });
}

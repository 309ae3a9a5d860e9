import type { Database } from 'better-sqlite3';
import { cachedOn } from './statements.js';

/**
 * Merging the search index's b-trees (issue 15 Search, issue 16). FTS5 writes each JSON dump's
 * entries as a new b-tree (a segment) and merges them in the background only four at a time
 * (`automerge`), so a bootstrap or a day of dumps leaves the index in several segments, and every
 * search reads each of them. Reading a term's entries newest first (the order of equal scores) pays
 * per segment most: on the 1M-entity benchmark database a page of 21 hits of a common word took
 * 36 µs before the segments were merged into one and 13 µs after, and the whole search mix went from
 * 131 to 96 µs a request in process (bench/RESULTS.md, "The search index in one b-tree").
 *
 * FTS5's `merge` command with a negative page count is an incremental `optimize`: it puts every
 * segment on one level and merges them, about `MERGE_PAGES` pages of output per statement, and
 * resumes a merge that an earlier call left unfinished (sqlite.org/fts5.html, the 'merge' command).
 * A merge changes no entry: searches answer the same before, during and after it.
 */

/**
 * Pages a step writes at most. Merging the index of the 1M-entity benchmark after a day of dumps
 * (264 of 330 entities, a third of them replacing one) took 33 steps of 250 pages, 2.6 s in all and
 * 163 ms for the longest, against 12 steps of 1,000 pages, 2.5 s and 300 ms: the smaller step keeps
 * what one statement holds the writer (and, in `start`, the server's event loop) shorter.
 */
const MERGE_PAGES = 250;

/**
 * Milliseconds of merging after each sync pass and each `import` of a small dump, at most one step
 * more (the merge is resumed by the next): a day of 264 dumps into a new database (87,000 entities)
 * merges in 46 ms, one packet of 80,000 recordings in 24 ms, while a whole index of 1M entities
 * takes 1–2.6 s (bench/RESULTS.md, "The search index in one b-tree").
 */
export const SEARCH_MERGE_BUDGET_MS = 200;

const MERGE_STEP = `INSERT INTO search_index(search_index, rank) VALUES('merge', -${MERGE_PAGES})`;
const TOTAL_CHANGES = 'SELECT total_changes()';

/** What {@link mergeSearchIndex} did. */
export interface SearchMergeResult {
  /** Merge statements run, the last one included (1 when there was nothing to merge). */
  steps: number;
  /** True when the index is in one segment (no work left); false when the budget ran out first. */
  done: boolean;
  ms: number;
}

/**
 * Merges the search index's segments on `sqlite` (the writer's connection, outside any transaction:
 * each step commits on its own), one step after another until no work is left or `budgetMs`
 * milliseconds have passed (default: no limit); an unfinished merge resumes at the next call.
 * A step found no work when it changed fewer than 2 rows (`total_changes()`, as the FTS5
 * documentation advises).
 * @throws a SQLite error (e.g. SQLITE_BUSY while another connection writes).
 */
export function mergeSearchIndex(sqlite: Database, budgetMs = Number.POSITIVE_INFINITY): SearchMergeResult {
  const started = performance.now();
  const totalChanges = cachedOn(sqlite, TOTAL_CHANGES).pluck();
  const step = cachedOn(sqlite, MERGE_STEP);
  let steps = 0;
  for (;;) {
    const before = totalChanges.get() as number;
    step.run();
    steps++;
    if ((totalChanges.get() as number) - before < 2)
      return { steps, done: true, ms: performance.now() - started };
    if (performance.now() - started >= budgetMs)
      return { steps, done: false, ms: performance.now() - started };
  }
}

import type { Database } from 'better-sqlite3';

const INDEX = 'changes_mbid';

/**
 * Drops the `changes` MBID index for a bulk load and returns the function that builds it again,
 * from its own definition in the schema (`sqlite_master`), so the statement is written once, in
 * src/db/schema.ts. Both run inside the load's transaction: readers never see the table without
 * it. Inserting 1,000,000 random-UUID keys one by one into the index thrashes the page cache (each
 * insert lands on a page evicted long ago); building it once, sorted, after the rows are written
 * took the 1M-line full dump's import from 93 s to 64 s (bench/RESULTS.md). Worth it only when
 * the load adds about as many rows as the table holds: building it again reads every row.
 * @throws a SQLite error (the caller's transaction rolls back, the index with it).
 */
export function suspendMbidIndex(db: Database): () => void {
  const definition = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?")
    .pluck()
    .get(INDEX) as string | undefined;
  if (definition === undefined) throw new Error(`the database has no index ${INDEX}`);
  db.exec(`DROP INDEX ${INDEX}`);
  return () => db.exec(definition);
}

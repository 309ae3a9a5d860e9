import type { PostgresStore } from '../../db/postgres/client.js';
import { type ImportJsonDumpOptions, type ImportResult, importJsonDumpWith } from '../import.js';
import { ingestJsonDumpPostgres } from './ingest.js';

/**
 * `livefeed import` into a PostgreSQL database: a local JSON dump through the PostgreSQL ingest
 * ({@link ingestJsonDumpPostgres}: one transaction, COPY), with the checks of sync/import.ts.
 * Then analyzes the search index (its size estimate sets the common-words threshold); a failure of
 * that goes to `options.onAnalyzeFailed`, the dump staying stored.
 * @throws ArchiveError, RangeError, the abort reason or PostgreSQL errors; nothing is stored then.
 */
export async function importJsonDumpPostgres(
  store: PostgresStore,
  options: ImportJsonDumpOptions & { onAnalyzeFailed?: (error: unknown) => void },
): Promise<ImportResult> {
  const result = await importJsonDumpWith((ingest) => ingestJsonDumpPostgres(store, ingest), options);
  // As after a bootstrap (sync/postgres/bootstrap.ts): the search's common-words threshold reads
  // the index size from the planner's estimate, stale after a large import until autovacuum comes.
  // The dump is committed by now: a failure here is logged, and autovacuum analyzes later.
  await store.pool.query('ANALYZE search_index').catch((error: unknown) => {
    options.onAnalyzeFailed?.(error);
  });
  return result;
}

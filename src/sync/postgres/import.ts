import type { PostgresStore } from '../../db/postgres/client.js';
import { type ImportJsonDumpOptions, type ImportResult, importJsonDumpWith } from '../import.js';
import { ingestJsonDumpPostgres } from './ingest.js';

/**
 * `livefeed import` into a PostgreSQL database: a local JSON dump through the PostgreSQL ingest
 * ({@link ingestJsonDumpPostgres}: one transaction, COPY), with the checks of sync/import.ts.
 * @throws ArchiveError, RangeError, the abort reason or PostgreSQL errors; nothing is stored then.
 */
export function importJsonDumpPostgres(
  store: PostgresStore,
  options: ImportJsonDumpOptions,
): Promise<ImportResult> {
  return importJsonDumpWith((ingest) => ingestJsonDumpPostgres(store, ingest), options);
}

import { openPostgresWriterStore } from '../db/postgres/writerSession.js';
import { safeMessage } from '../feed/errors.js';
import type { Logger } from '../logger.js';
import { readRewritesPostgres } from '../sync/postgres/feedServed.js';
import { importJsonDumpPostgres } from '../sync/postgres/import.js';
import { acquirePostgresWriterLock } from '../sync/postgres/lock.js';
import { restampCompletePostgres } from '../sync/postgres/packetState.js';
import type { ImportTarget } from './importTarget.js';
import { withLock } from './session.js';
import type { PostgresChoice } from './targets.js';

/**
 * A PostgreSQL database as the target of `livefeed import` (issue 17): opened (migrated), its writer
 * lock the advisory lock of sync/postgres/lock.ts, the dump through the COPY ingest. Loaded only for
 * a postgres:// `--db`, so that the SQLite commands never load the driver.
 * @throws Error naming the database (never its password) when it cannot be opened.
 */
export async function postgresImportTarget(choice: PostgresChoice, log: Logger): Promise<ImportTarget> {
  const store = await openPostgresWriterStore(choice.connection, 'import', log);
  log.info({ event: 'database', database: store.display }, `importing into PostgreSQL ${store.display}`);
  return {
    withLock: (stopMessage, work) =>
      withLock((signal) => acquirePostgresWriterLock(store, { logger: log, signal }), stopMessage, work),
    importDump: (options) =>
      importJsonDumpPostgres(store, {
        ...options,
        onAnalyzeFailed: (error) =>
          log.warn(
            { event: 'analyze-failed', err: safeMessage(error) },
            `the dump is stored, but the search index could not be analyzed: ${safeMessage(error)} (autovacuum will)`,
          ),
      }),
    feedRewrites: () => readRewritesPostgres(store.pool),
    reannounce: (packet, now) => restampCompletePostgres(store, packet, now),
    close: () => store.close(),
  };
}

import { pgRows } from '../db/postgres/sql.js';
import { openPostgresWriterStore } from '../db/postgres/writerSession.js';
import { PUT_META } from '../db/status.js';
import type { Logger } from '../logger.js';
import { postgresBootstrapStore } from '../sync/postgres/bootstrap.js';
import { acquirePostgresWriterLock } from '../sync/postgres/lock.js';
import type { BootstrapTarget } from './bootstrapTarget.js';
import { withLock } from './session.js';
import type { PostgresChoice } from './targets.js';

/**
 * A PostgreSQL database as the target of `livefeed bootstrap` (issue 17): opened (migrated), its
 * writer lock the advisory lock of sync/postgres/lock.ts (a sync or import elsewhere makes it exit
 * 5), the full dumps through the COPY ingest (sync/postgres/bootstrap.ts). Loaded only for a
 * postgres:// `--db`, so that the SQLite commands never load the driver.
 * @throws Error naming the database (never its password) when it cannot be opened.
 */
export async function postgresBootstrapTarget(choice: PostgresChoice, log: Logger): Promise<BootstrapTarget> {
  const store = await openPostgresWriterStore(choice.connection, 'bootstrap', log);
  log.info({ event: 'database', database: store.display }, `bootstrapping into PostgreSQL ${store.display}`);
  return {
    store: postgresBootstrapStore(store),
    withLock: (stopMessage, work) =>
      withLock((signal) => acquirePostgresWriterLock(store, { logger: log, signal }), stopMessage, work),
    markDemo: async () => {
      await pgRows(store.pool, PUT_META, ['demo', 'true']);
    },
    close: () => store.close(),
  };
}

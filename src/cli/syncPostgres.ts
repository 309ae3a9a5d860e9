import { postgresWebhookStore } from '../db/postgres/webhooks.js';
import { openPostgresWriterStore } from '../db/postgres/writerSession.js';
import { acquirePostgresWriterLock, endStaleWriterSession } from '../sync/postgres/lock.js';
import { postgresSyncStore } from '../sync/postgres/syncStore.js';
import { syncWebhooks } from '../webhooks/wiring.js';
import type { Session } from './session.js';
import type { SyncWriter } from './syncWriter.js';
import type { PostgresChoice } from './targets.js';
import { VERSION } from './version.js';

/**
 * `livefeed sync` into a PostgreSQL database (issue 17): JSON dumps, replication packets,
 * `--keep-history` pruning and webhooks. Loaded only for a
 * postgres:// `--db`, so the SQLite commands never load the driver.
 */

/**
 * The PostgreSQL writer of `session`: the database opened (migrated), its advisory writer lock
 * taken (sync/postgres/lock.ts), the demo marked when it syncs the bundled sample feed. `staleSession`:
 * this process's earlier lock session (after its connection broke), ended first if it still holds
 * the lock.
 * @throws LockHeldError (exit 5) when another sync writes and `--wait` is not given; Error naming the database (never its
 *   password) when it cannot be opened.
 */
export async function postgresSyncWriter(
  session: Session,
  choice: PostgresChoice,
  staleSession?: number,
): Promise<SyncWriter> {
  const { config, logger } = session;
  const store = await openPostgresWriterStore(choice.connection, 'sync', logger);
  try {
    if (staleSession !== undefined && (await endStaleWriterSession(store, staleSession)))
      logger.warn(
        { event: 'stale-session-ended', backendPid: staleSession },
        "ended this sync's earlier database session, which still held the writer lock",
      );
    const lock = await acquirePostgresWriterLock(store, {
      wait: config.wait,
      logger,
      signal: session.signal,
    });
    logger.info({ event: 'database', database: store.display }, `syncing into PostgreSQL ${store.display}`);
    const syncStore = postgresSyncStore(store);
    if (session.target.demo) await syncStore.markDemo();
    return {
      store: syncStore,
      lost: lock.lost,
      backendPid: lock.backendPid,
      // Driven by the packets this sync completes (in process), as on SQLite.
      webhooks: (signal) =>
        syncWebhooks({
          store: postgresWebhookStore(store),
          endpoints: config.webhooks,
          logger,
          signal,
          userAgent: `livefeed/${VERSION}`,
        }),
      release: async () => {
        try {
          await lock.release();
        } finally {
          await store.close();
        }
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

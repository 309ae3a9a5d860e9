import { sqliteWebhookStore } from '../db/webhookStore.js';
import { acquireWriterLock } from '../sync/lock.js';
import { sqliteSyncStore } from '../sync/sqliteSyncStore.js';
import type { SyncStore } from '../sync/syncStore.js';
import { type SyncWebhooks, syncWebhooks } from '../webhooks/wiring.js';
import type { Session } from './session.js';
import { VERSION } from './version.js';

/**
 * The database side of `livefeed sync`: its store under the writer lock and its webhooks. SQLite
 * here; PostgreSQL in syncPostgres.ts, loaded only for a postgres:// database.
 */
export interface SyncWriter {
  store: SyncStore;
  /** Aborted when the writer lock is lost: the sync stops as on a signal. */
  lost: AbortSignal;
  /**
   * The webhooks of `--webhooks-file`, registered, delivered through the writer's store.
   * @throws the store's error when they cannot be registered
   */
  webhooks(signal: AbortSignal): Promise<SyncWebhooks>;
  /** Releases the lock and closes what the writer opened itself. */
  release(): Promise<void>;
  /** On PostgreSQL, the server process of the session holding the lock (see syncReconnect.ts). */
  backendPid?: number;
}

/**
 * The SQLite writer of `session`: its database opened (closed with the session) and its writer
 * lock taken (src/sync/lock.ts).
 * @throws LockHeldError (exit 5) when another sync holds the lock and `--wait` is not given
 */
export async function sqliteSyncWriter(session: Session): Promise<SyncWriter> {
  const { config, logger } = session;
  const store = session.open();
  const lock = await acquireWriterLock(store, { wait: config.wait, logger, signal: session.signal });
  return {
    store: sqliteSyncStore(store),
    lost: lock.lost,
    webhooks: (signal) =>
      syncWebhooks({
        store: sqliteWebhookStore(store),
        endpoints: config.webhooks,
        logger,
        signal,
        userAgent: `livefeed/${VERSION}`,
      }),
    release: async () => lock.release(),
  };
}

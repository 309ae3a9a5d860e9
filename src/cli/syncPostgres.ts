import { type Config, ConfigError } from '../config.js';
import { openPostgresStore } from '../db/postgres/client.js';
import { acquirePostgresWriterLock } from '../sync/postgres/lock.js';
import { postgresSyncStore } from '../sync/postgres/syncStore.js';
import type { SyncWebhooks } from '../webhooks/wiring.js';
import type { Session } from './session.js';
import type { SyncWriter } from './syncWriter.js';
import type { PostgresChoice } from './targets.js';

/**
 * `livefeed sync` into a PostgreSQL database (issue 17): JSON dumps, replication packets and
 * `--keep-history` pruning. Loaded only for a
 * postgres:// `--db`, so the SQLite commands never load the driver.
 */

/** Where users read what works on PostgreSQL so far. */
const README = 'README, PostgreSQL (in progress)';

/**
 * @throws ConfigError (exit 2) for a part of the sync not ported to PostgreSQL yet, saying what to
 *   do instead: never a sync that does half of what it was asked.
 */
export function refuseUnported(config: Config, display: string): void {
  const refuse = (what: string, instead: string) => {
    throw new ConfigError(
      `livefeed sync on PostgreSQL (${display}) does not ${what} yet: ${instead} for now (${README})`,
    );
  };
  if (config.webhooks.length > 0) refuse('deliver webhooks (--webhooks-file)', 'leave --webhooks-file out');
}

/** Webhooks are refused on PostgreSQL (see {@link refuseUnported}): nothing to deliver. */
const NO_WEBHOOKS: SyncWebhooks = {
  watch: (ctx) => ctx,
  follow: () => {},
  deliverNow: async () => [],
  stop: async () => {},
};

/**
 * The PostgreSQL writer of `session`: the database opened (migrated), its advisory writer lock
 * taken (sync/postgres/lock.ts), the demo marked when it syncs the bundled sample feed.
 * @throws ConfigError (exit 2) for what does not work on PostgreSQL yet; LockHeldError (exit 5)
 *   when another sync writes and `--wait` is not given; Error naming the database (never its
 *   password) when it cannot be opened.
 */
export async function postgresSyncWriter(session: Session, choice: PostgresChoice): Promise<SyncWriter> {
  const { config, logger } = session;
  refuseUnported(config, choice.connection.display);
  const store = await openPostgresStore(choice.connection, {
    applicationName: 'livefeed sync',
    onIdleError: (error) =>
      logger.warn({ event: 'database-connection-lost', err: error.message }, 'a database connection broke'),
  });
  try {
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
      webhooks: () => NO_WEBHOOKS,
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

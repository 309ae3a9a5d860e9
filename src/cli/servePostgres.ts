import { openPostgresStore } from '../db/postgres/client.js';
import { postgresReads } from '../db/postgres/reads.js';
import type { Reads } from '../db/reads.js';
import type { Logger } from '../logger.js';
import type { PostgresChoice } from './targets.js';

/**
 * The database a `serve` (or `start`) reads over PostgreSQL (issue 17, docs/POSTGRES_PORT.md step
 * 8): a pool (migrations applied on open, as every command opens it) and its reads. Loaded only for
 * a postgres:// `--db`, so SQLite servers never load the driver.
 */
export interface ServedPostgres {
  reads: Reads;
  /** The URL without its password. */
  display: string;
  /** Ends the pool. */
  close(): Promise<void>;
}

/**
 * Most connections of a server's pool: GraphQL requests read in parallel up to it, a change stream
 * read or a snapshot holds one for its transaction.
 */
const SERVE_CONNECTIONS = 10;

/**
 * Opens the PostgreSQL database `choice` for serving.
 * @throws Error naming the database (never its password) when it cannot be opened.
 */
export async function openServedPostgres(choice: PostgresChoice, logger: Logger): Promise<ServedPostgres> {
  const store = await openPostgresStore(choice.connection, {
    maxConnections: SERVE_CONNECTIONS,
    applicationName: 'livefeed serve',
    onIdleError: (error) =>
      logger.warn({ event: 'database-connection-lost', err: error.message }, 'a database connection broke'),
  });
  logger.info({ event: 'database', database: store.display }, `serving PostgreSQL ${store.display}`);
  return { reads: postgresReads(store), display: store.display, close: () => store.close() };
}

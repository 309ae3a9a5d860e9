import { openPostgresStore } from '../db/postgres/client.js';
import { watchPostgresPackets } from '../db/postgres/listen.js';
import { openPostgresReads } from '../db/postgres/replicaReads.js';
import type { ReadServerState, ReplayLag } from '../db/postgres/replicas.js';
import type { Reads } from '../db/reads.js';
import { safeMessage } from '../feed/errors.js';
import type { Logger } from '../logger.js';
import type { PacketEvents } from '../ops/events.js';
import type { PostgresChoice } from './targets.js';

/**
 * The database a `serve` (or `start`) reads over PostgreSQL (issue 17, docs/POSTGRES_PORT.md steps
 * 6, 8 and 9): a pool on the primary (migrations applied on open, as every command opens it), the
 * reads spread over the `--db-replica` replicas when there are any, and the LISTEN watch of
 * completed packets. Loaded only for a postgres:// `--db`, so SQLite servers never load the driver.
 */
export interface ServedPostgres {
  /** Reads of every route; each call to a replica when there are any (else the primary). */
  reads: Reads;
  /** The reads of one GraphQL request: one server for all of them (README, Read replicas). */
  readsForRequest(): Reads;
  /** The URL without its password. */
  display: string;
  /** The primary and each replica: reads answered, failures in a row, skipped (for /metrics). */
  servers(): ReadServerState[];
  /** Each replica's replay lag in seconds, asked at each scrape of /metrics. */
  replayLags(): Promise<ReplayLag[]>;
  /**
   * Publishes `packetSynced` for each packet a sync in another process completes, woken by its
   * `NOTIFY` (db/postgres/listen.ts), until `signal` aborts; failures go to the log, the watch
   * reconnects by itself.
   */
  watch(events: PacketEvents, signal: AbortSignal): void;
  /** Ends the watch, the replicas' pools and the primary's pool. */
  close(): Promise<void>;
}

/**
 * Most connections of a server's pool: GraphQL requests read in parallel up to it, a change stream
 * read or a snapshot holds one for its transaction.
 */
const SERVE_CONNECTIONS = 10;

/**
 * Opens the PostgreSQL database `choice` (and its replicas) for serving.
 * @throws Error naming the database (never its password) when it cannot be opened.
 */
export async function openServedPostgres(choice: PostgresChoice, logger: Logger): Promise<ServedPostgres> {
  const store = await openPostgresStore(choice.connection, {
    maxConnections: SERVE_CONNECTIONS,
    applicationName: 'livefeed serve',
    onIdleError: (error) =>
      logger.warn({ event: 'database-connection-lost', err: error.message }, 'a database connection broke'),
  });
  const replicated = openPostgresReads(store, choice.replicas, {
    maxConnections: SERVE_CONNECTIONS,
    onSkip: ({ display, error, skipMs }) =>
      logger.warn(
        { event: 'db-replica-skipped', replica: display, err: safeMessage(error), skipMs },
        `read replica ${display} skipped for ${skipMs} ms: ${safeMessage(error)}`,
      ),
    onIdleError: (error, display) =>
      logger.warn(
        { event: 'db-replica-error', replica: display, err: error.message },
        'a replica connection broke',
      ),
  });
  const replicas = choice.replicas.map((replica) => replica.display);
  logger.info(
    { event: 'database', database: store.display, replicas },
    `serving PostgreSQL ${store.display}${replicas.length ? ` (reads from ${replicas.join(', ')})` : ''}`,
  );
  const watches: (() => Promise<void>)[] = [];
  return {
    reads: replicated.reads,
    readsForRequest: () => replicated.forRequest(),
    display: store.display,
    servers: () => replicated.servers(),
    replayLags: () => replicated.replayLags(),
    watch(events, signal) {
      const onError = (error: unknown) =>
        logger.warn({ event: 'watch-failed', err: safeMessage(error) }, 'cannot check for synced packets');
      watches.push(watchPostgresPackets(choice.connection, events, { signal, onError }).stop);
    },
    async close() {
      for (const stop of watches) await stop();
      await replicated.close();
      await store.close();
    },
  };
}

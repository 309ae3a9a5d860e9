import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import type { Reads } from '../reads.js';
import { type PostgresConnection, type PostgresDb, type PostgresStore, postgresPool } from './client.js';
import { postgresReads } from './reads.js';
import { ReadRouter, type ReadRouterOptions, type ReadServerState, type ReplayLag } from './replicas.js';
import * as schema from './schema.js';

/**
 * The GraphQL reads of a PostgreSQL database with its read replicas (issue 17, step 9; README,
 * PostgreSQL). Writes, the writer lock and migrations stay on the store's own pool (the primary).
 */
export interface PostgresReads {
  /**
   * Reads whose every call goes to a replica (the least busy; skipped with a back-off when it
   * fails, the primary when none answers). A call made of several statements (`snapshot`, a
   * change stream page, its count, `latestPacket`'s walk) runs in one transaction or statement on
   * ONE server. Without replicas: the store's own reads.
   */
  reads: Reads;
  /**
   * Reads pinned to one server from their first call on: make one per GraphQL request, so that
   * `latestPacket`, a change stream page and its `totalCount` and the data they cover all come from
   * the server that answered first (a replica never answers a packet it has not replayed).
   * Without replicas: {@link PostgresReads.reads}.
   */
  forRequest(): Reads;
  /** Each server's reads and failures (replicas first, then the primary); empty without replicas (nothing routed). */
  servers(): ReadServerState[];
  /** Each replica's replay lag (ReadRouter.replayLags); empty without replicas. Never rejects. */
  replayLags(): Promise<ReplayLag[]>;
  /** Ends the replicas' pools; the store (primary) stays open: its owner closes it. */
  close(): Promise<void>;
}

/** Options of {@link openPostgresReads}. */
export interface PostgresReadsOptions extends ReadRouterOptions {
  /** Most connections of each replica's pool. Default 4. */
  maxConnections?: number;
  /** Milliseconds a connection to a replica may take before the replica counts as failed. Default 5,000. */
  connectTimeoutMs?: number;
  /** Told about an error of an idle replica connection (the replica went away). */
  onIdleError?: (error: Error, display: string) => void;
}

/** The store with `pool` in place of its own, for postgresReads (drizzle made on first use). */
function storeOver(store: PostgresStore, pool: pg.Pool): PostgresStore {
  let db: PostgresDb | undefined;
  return {
    pool,
    get db() {
      db ??= drizzle(pool, { schema });
      return db;
    },
    display: store.display,
    close: store.close,
  };
}

/**
 * The reads of `store` spread over `replicas` (streaming replicas of the store's database, each a
 * `--db-replica` URL with its password put in). Opens no connection: a replica is first reached by
 * a read, and one that cannot be reached then is skipped (`options.onSkip` is told: log it).
 * Replicas are not migrated (they replay the primary's migrations).
 * @returns the reads, and `close` for the replicas' pools
 */
export function openPostgresReads(
  store: PostgresStore,
  replicas: readonly PostgresConnection[],
  options: PostgresReadsOptions = {},
): PostgresReads {
  if (replicas.length === 0) {
    const reads = postgresReads(store);
    return {
      reads,
      forRequest: () => reads,
      servers: () => [],
      replayLags: async () => [],
      close: async () => {},
    };
  }
  const servers = replicas.map((connection) => ({
    display: connection.display,
    pool: postgresPool(connection, {
      maxConnections: options.maxConnections,
      applicationName: 'livefeed reads',
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      onIdleError: (error) => options.onIdleError?.(error, connection.display),
    }),
  }));
  const router = new ReadRouter({ pool: store.pool, display: store.display }, servers, options);
  return {
    reads: postgresReads(storeOver(store, router.pool())),
    forRequest: () => postgresReads(storeOver(store, router.session())),
    servers: () => router.servers(),
    replayLags: () => router.replayLags(),
    close: () => router.close(),
  };
}

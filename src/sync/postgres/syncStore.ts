import type { PostgresStore } from '../../db/postgres/client.js';
import { inPgTransaction, pgRows } from '../../db/postgres/sql.js';
import { PUT_META } from '../../db/status.js';
import { expiredQuery, FORGET_KEPT_SQL, type KeptRow, removeKept } from '../retention.js';
import { type DumpStatus, PACKET_STATE_SQL, type PendingDump } from '../state.js';
import type { SyncStore } from '../syncStore.js';
import { readRewritesPostgres } from './feedServed.js';
import { markPendingPostgres, recordFailurePostgres, retryDeferredPostgres } from './fileRecords.js';
import { ingestJsonDumpPostgres } from './ingest.js';
import {
  completePacketsPostgres,
  packetPositionPostgres,
  recordUpstreamPostgres,
  reopenPacketPostgres,
  restampCompletePostgres,
} from './packetState.js';
import { historyCutoffPostgres, pruneHistoryPostgres } from './prune.js';
import { postgresReplicationRecords } from './replication.js';

/**
 * The sync's operations on a PostgreSQL database (sync/syncStore.ts, issue 17): the COPY ingest of
 * JSON dumps (ingest.ts), replication packets (replication.ts), the file records, packet state and
 * retention with the statements the SQLite store runs, numbered for PostgreSQL (db/postgres/sql.ts).
 * Loaded only for a postgres:// database. Closing `store` stays with whoever opened it.
 */
export function postgresSyncStore(store: PostgresStore): SyncStore {
  const { pool } = store;
  return {
    kind: 'postgres',
    display: store.display,
    feedRewrites: () => readRewritesPostgres(pool),
    ingestDump: (options) => ingestJsonDumpPostgres(store, options),
    replication: postgresReplicationRecords(store),
    history: {
      cutoff: (keep, now) => historyCutoffPostgres(store, keep, now),
      prune: (keep, now, logger) => pruneHistoryPostgres(store, keep, now, logger),
    },
    markPending: (packet, entity, now) => markPendingPostgres(store, packet, entity, now),
    recordFailure: (file, reason, now, error) => recordFailurePostgres(store, file, reason, now, error),
    retryDeferred: (file, now) => retryDeferredPostgres(store, file, now),
    dumpStatus: async (packet, entity) =>
      (await pgRows<{ status: DumpStatus }>(pool, PACKET_STATE_SQL.dumpStatus, [packet, entity]))[0]?.status,
    pendingDumps: (from, to) => pgRows<PendingDump>(pool, PACKET_STATE_SQL.pendingDumps, [from, to]),
    markNoChanges: async (packet, entity, by, now) => {
      await pgRows(pool, PACKET_STATE_SQL.markNoChanges, [by, now, packet, entity]);
    },
    markDumpsSeen: async (packet, at) => {
      await pgRows(pool, PACKET_STATE_SQL.markDumpsSeen, [at, packet]);
    },
    explainPending: async (packet, entity, reason, now) => {
      await pgRows(pool, PACKET_STATE_SQL.explainPending, [reason, now, packet, entity]);
    },
    timeSettledWithEvidence: () => pgRows(pool, PACKET_STATE_SQL.timeSettledWithEvidence),
    completePackets: (range, entities, requireReplication, now) =>
      completePacketsPostgres(store, range, entities, requireReplication, now),
    reopenPacket: (packet) => reopenPacketPostgres(store, packet),
    restampComplete: (packet, now) => restampCompletePostgres(store, packet, now),
    packetPosition: () => packetPositionPostgres(store),
    recordUpstream: (latest, at) => recordUpstreamPostgres(store, latest, at),
    markDemo: async () => {
      await pgRows(pool, PUT_META, ['demo', 'true']);
    },
    async applyRetention(dataDir, keep, now, logger) {
      if (keep.kind === 'all') return { files: 0, bytes: 0 };
      const { sql, arg } = expiredQuery(keep, now);
      const rows = await pgRows<KeptRow>(pool, sql, [arg]);
      if (rows.length === 0) return { files: 0, bytes: 0 };
      // The rows forget the archives first: a crash in between leaves a stray file, never a row
      // pointing at a deleted one (sync/retention.ts).
      await inPgTransaction(pool, async (client) => {
        for (const row of rows) await pgRows(client, FORGET_KEPT_SQL, [row.name]);
      });
      return removeKept(rows, dataDir, logger);
    },
    // No WAL of ours to checkpoint: PostgreSQL's checkpointer does its own.
    housekeeping: () => {},
  };
}

import { basename } from 'node:path';
import type pg from 'pg';
import type { PostgresStore } from '../../db/postgres/client.js';
import { reindexOldRemovals, unindexRemovals } from '../../db/postgres/searchIndex.js';
import { CODE_POINT_ORDER, inPgTransaction, pgRow, pgRows } from '../../db/postgres/sql.js';
import {
  MISSING_PACKETS_SQL,
  REPLICATION_STATUS_SQL,
  type TableChangesRow,
  tableChangesSql,
} from '../../db/replicationQueries.js';
import { packetLabel } from '../../feed/replication/archive.js';
import type { ReplicationArchiveInfo } from '../../feed/replication/types.js';
import {
  DELETE_PACKET_ROWS_SQL,
  DELETE_UNRESOLVED_SQL,
  INSERT_UNRESOLVED_SQL,
  replicationPacketArgs,
  type StoredReplicationPacket,
  type StoreReplicationOptions,
  stageArchive,
  UPSERT_REPLICATION_PACKET_SQL,
  unresolvedMessage,
} from '../replication.js';
import {
  type Candidate,
  candidateArgs,
  type DerivedRemovals,
  deriveRemovalsWith,
  REMOVAL_SQL,
} from '../replicationRemovals.js';
import type { ReplicationRecords } from '../syncStore.js';
import { recordEventsWriteOn } from './feedServed.js';
import { noteSignature, recordNotTherePostgres } from './fileRecords.js';
import { recordPacketFacts, upsertFeedFile } from './record.js';
import { PostgresPacketStaging } from './replicationStaging.js';

/**
 * Replication packets on PostgreSQL (issue 17): sync/replication.ts with the statements written
 * once there and in replicationSql.ts, `row_changes` as jsonb. The entities a packet removes leave
 * the search index in its transaction, as on SQLite (db/postgres/searchIndex.ts).
 */

/** The removals `packet` shows, derived in its transaction on `client` (sync/replicationRemovals.ts). */
async function deriveRemovalsPostgres(
  client: pg.ClientBase,
  packet: number,
  where: string,
): Promise<DerivedRemovals> {
  const candidates = await pgRows<Candidate>(client, REMOVAL_SQL.candidates, candidateArgs(packet));
  return deriveRemovalsWith(
    candidates,
    {
      gidOf: async (table, id) =>
        (await pgRow<{ gid: string }>(client, REMOVAL_SQL.gidOfRow, [table, id, packet]))?.gid ?? null,
      insert: (mbid, entity, kind, mergedInto) =>
        pgRows(client, REMOVAL_SQL.insert, [mbid, entity, packet, kind, mergedInto]),
    },
    where,
  );
}

/** {@link StoreReplicationOptions} and, on PostgreSQL, the staged rows' bound in memory. */
export interface PostgresReplicationOptions extends StoreReplicationOptions {
  /** Characters of COPY text each staging table holds in memory before its temporary file (textSpool.ts). */
  spoolMemoryChars?: number;
}

/** What {@link writePacket} is told besides the staged rows. */
interface WriteOptions extends StoreReplicationOptions {
  fileName: string;
  where: string;
  now: () => Date;
}

/**
 * Stores replication packet `packet` from the verified archive at `archivePath` in ONE transaction,
 * visible whole or not at all, as sync/replication.ts storeReplicationPacket does on SQLite: its row
 * changes in upstream's apply order (replacing an earlier copy), its `replication_packets` row, its
 * removals, the `removal-unresolved` and `schema-change` events and the packet's facts. The archive
 * is read first (holding no connection), then written.
 * @throws ArchiveError naming packet, member and line; the abort reason; PostgreSQL errors. Nothing
 *   is stored then.
 */
export async function storeReplicationPacketPostgres(
  store: PostgresStore,
  packet: number,
  archivePath: string,
  options: PostgresReplicationOptions = {},
): Promise<StoredReplicationPacket> {
  const now = options.now ?? (() => new Date());
  const fileName = options.fileName ?? basename(archivePath);
  const where = packetLabel(packet, fileName);
  options.signal?.throwIfAborted();
  const staging = new PostgresPacketStaging(options.spoolMemoryChars);
  try {
    const info = await stageArchive(archivePath, staging, packet, fileName, options);
    return await writePacket(store, packet, staging, info, { ...options, fileName, where, now });
  } finally {
    staging.close();
  }
}

/** The staged packet written in one transaction (see {@link storeReplicationPacketPostgres}). */
async function writePacket(
  store: PostgresStore,
  packet: number,
  staging: PostgresPacketStaging,
  info: ReplicationArchiveInfo,
  options: WriteOptions,
): Promise<StoredReplicationPacket> {
  const { fileName, where, now } = options;
  return inPgTransaction(store.pool, async (client) => {
    const at = now().toISOString();
    // A packet stored again: the entities its earlier copy removed are indexed again before that
    // copy's removals go, then unindexed by what this copy removes (db/postgres/searchIndex.ts).
    await recordEventsWriteOn(client, packet);
    await reindexOldRemovals(client, packet);
    for (const sql of DELETE_PACKET_ROWS_SQL) await pgRows(client, sql, [packet]);
    const rowCount = await staging.finish(client, info, packet, where);
    await pgRows(
      client,
      UPSERT_REPLICATION_PACKET_SQL,
      replicationPacketArgs(packet, info, rowCount, fileName, at),
    );
    const removals = await deriveRemovalsPostgres(client, packet, where);
    await unindexRemovals(client, packet);
    await pgRows(client, DELETE_UNRESOLVED_SQL, [packet]);
    if (removals.unresolved.length > 0)
      await pgRows(client, INSERT_UNRESOLVED_SQL, [
        at,
        packet,
        unresolvedMessage(packet, removals.unresolved),
      ]);
    const schemaChange = await recordPacketFacts(client, packet, info, at);
    const tables = await pgRows<TableChangesRow>(client, tableChangesSql(CODE_POINT_ORDER), [packet]);
    if (options.file) await upsertFeedFile(client, options.file);
    options.signal?.throwIfAborted();
    options.beforeCommit?.();
    return {
      format: info.format,
      replicationSequence: info.replicationSequence,
      schemaSequence: info.schemaSequence,
      timestamp: info.timestamp,
      rowCount,
      tables,
      removals: removals.count,
      schemaChange,
      unresolvedDeletions: removals.unresolved.length,
    };
  });
}

/** The replication packets of a PostgreSQL sync store (sync/syncStore.ts ReplicationRecords). */
export function postgresReplicationRecords(store: PostgresStore): ReplicationRecords {
  return {
    replicationStored: async (packet) =>
      (await pgRow<{ status: string }>(store.pool, REPLICATION_STATUS_SQL, [packet]))?.status === 'SYNCED',
    replicationStatus: async (packet) =>
      (await pgRow<{ status: string }>(store.pool, REPLICATION_STATUS_SQL, [packet]))?.status,
    storeReplicationPacket: (packet, archivePath, options) =>
      storeReplicationPacketPostgres(store, packet, archivePath, options),
    recordNotThere: (packet, reason, now) => recordNotTherePostgres(store, packet, reason, now),
    missingReplicationPackets: async (below) =>
      (await pgRows<{ packet: number }>(store.pool, MISSING_PACKETS_SQL, [below])).map((row) => row.packet),
    recordSignatureFailure: (file, error, now) =>
      inPgTransaction(store.pool, (client) => noteSignature(client, file, error, now)),
  };
}

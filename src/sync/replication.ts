import { basename } from 'node:path';
import type Database from 'better-sqlite3';
import type { Store } from '../db/client.js';
import { recordEventsWrite } from '../db/feedServed.js';
import { type RowChangeRow, type TableChangesRow, tableChangesOf } from '../db/replicationQueries.js';
import { RemovalIndexWriter } from '../db/searchIndex.js';
import { cachedOn } from '../db/statements.js';
import { packetLabel, readReplicationArchive } from '../feed/replication/archive.js';
import type {
  ReplicationArchiveInfo,
  ReplicationFormat,
  ReplicationSink,
  RowChange,
} from '../feed/replication/types.js';
import { type FeedFileRecord, upsertFeedFile } from './ingest.js';
import { recordPacketFacts, type SchemaChange } from './packetFacts.js';
import { deriveRemovals, type UnresolvedRemoval } from './replicationRemovals.js';
import { PacketStaging } from './replicationStaging.js';
import { inTransaction } from './transaction.js';

/** Options of {@link storeReplicationPacket}. */
export interface StoreReplicationOptions {
  signal?: AbortSignal;
  /** Feed-root-relative file name recorded in `replication_packets.file_name`; default the archive's base name. */
  fileName?: string;
  /** Clock for `updated_at`, `created_at` and event times. */
  now?: () => Date;
  /** The archive's `feed_files` record, written in the same transaction. */
  file?: FeedFileRecord;
  /** Called in the transaction just before COMMIT (e.g. to move the archive into place). */
  beforeCommit?: () => void;
  /** Most decompressed bytes of the archive (readReplicationArchive; `--max-dump-bytes`). */
  maxBytes?: number;
}

/** Row counts of one table in one packet. */
export type TableChanges = TableChangesRow;

/** What {@link storeReplicationPacket} stored. */
export interface StoredReplicationPacket {
  format: ReplicationFormat;
  replicationSequence: number;
  schemaSequence: number;
  /** Archive `TIMESTAMP`, ISO 8601 UTC. */
  timestamp: string;
  rowCount: number;
  /** Per table, sorted by table name. */
  tables: TableChanges[];
  /** Removals derived from this packet (DELETED and MERGED). */
  removals: number;
  /** Set when the schema sequence differs from the previous stored packet's (also an `events` row). */
  schemaChange: SchemaChange | null;
  /** Deleted entity rows whose MBID no stored packet shows (also an `events` row). */
  unresolvedDeletions: number;
}

/**
 * Stores replication packet `packet` from the local archive file `archivePath` (FEED.md,
 * Replication packet archives) in ONE transaction, visible whole or not at all: its row changes in
 * upstream's apply order (`row_changes`, replacing any earlier rows of that packet, so re-runs add
 * nothing twice), its `replication_packets` row (SYNCED), the removals it shows, a `schema-change`
 * event when its schema sequence differs from the previous stored packet's, and the packet's
 * `packets.timestamp` / `schema_sequence` where still empty (the row is created if missing).
 * The archive is streamed; rows are staged in SQLite, not in memory.
 * @throws ArchiveError naming packet (and member and line where there is one) when the archive
 *   breaks the format, including REPLICATION_SEQUENCE ≠ `packet`; the signal's reason when
 *   `options.signal` is already aborted, an AbortError when it aborts while reading; file system
 *   and SQLite errors (e.g. busy). Nothing is stored in any of these cases.
 */
export async function storeReplicationPacket(
  store: Store,
  packet: number,
  archivePath: string,
  options: StoreReplicationOptions = {},
): Promise<StoredReplicationPacket> {
  const now = options.now ?? (() => new Date());
  const fileName = options.fileName ?? basename(archivePath);
  const where = packetLabel(packet, fileName);
  const { sqlite } = store;
  options.signal?.throwIfAborted();
  return inTransaction(store, async () => {
    const staging = new PacketStaging(sqlite);
    try {
      const info = await stageArchive(archivePath, staging, packet, fileName, options);
      const stored = await writePacket(store, staging, info, {
        packet,
        fileName,
        where,
        at: now().toISOString(),
      });
      if (options.file) upsertFeedFile(store, options.file);
      options.beforeCommit?.();
      return stored;
    } finally {
      staging.clear();
    }
  });
}

/** (packet): the rows an earlier copy of the packet left, deleted before it is stored again. */
export const DELETE_PACKET_ROWS_SQL = [
  'DELETE FROM row_changes WHERE packet = ?',
  'DELETE FROM removals WHERE packet = ?',
] as const;

/** Replaces the packet's rows and removals with the staged ones and records its rows and events. */
async function writePacket(
  store: Store,
  staging: PacketStaging,
  info: ReplicationArchiveInfo,
  { packet, fileName, where, at }: { packet: number; fileName: string; where: string; at: string },
): Promise<StoredReplicationPacket> {
  const { sqlite } = store;
  // The search index follows the removals in the same transaction (db/searchIndex.ts).
  const search = new RemovalIndexWriter(sqlite);
  recordEventsWrite(store, packet);
  search.reindexOldRemovals(packet);
  for (const sql of DELETE_PACKET_ROWS_SQL) cachedOn(sqlite, sql).run(packet);
  const rowCount = staging.finish(info, packet, where);
  upsertReplicationPacket(sqlite, packet, info, rowCount, fileName, at);
  const removals = await deriveRemovals(sqlite, packet, where);
  search.applyRemovals(packet);
  recordUnresolved(sqlite, packet, removals.unresolved, at);
  const schemaChange = recordPacketFacts(sqlite, packet, info, at);
  return {
    format: info.format,
    replicationSequence: info.replicationSequence,
    schemaSequence: info.schemaSequence,
    timestamp: info.timestamp,
    rowCount,
    tables: tableChangesOf(store, packet),
    removals: removals.count,
    schemaChange,
    unresolvedDeletions: removals.unresolved.length,
  };
}

/**
 * (packet, format, schema_sequence, timestamp, dbmirror_version, row_count, file_name, updated_at):
 * the stored packet's row; written once for SQLite and PostgreSQL (sync/postgres/replication.ts).
 */
export const UPSERT_REPLICATION_PACKET_SQL = `INSERT INTO replication_packets
         (packet, status, format, schema_sequence, timestamp, dbmirror_version, row_count, file_name, error, next_retry_at, updated_at)
       VALUES (?, 'SYNCED', ?, ?, ?, ?, ?, ?, NULL, NULL, ?)
       ON CONFLICT (packet) DO UPDATE SET
         status = 'SYNCED', format = excluded.format, schema_sequence = excluded.schema_sequence,
         timestamp = excluded.timestamp, dbmirror_version = excluded.dbmirror_version, row_count = excluded.row_count,
         file_name = excluded.file_name, error = NULL, next_retry_at = NULL, missing_since = NULL,
         signature_missing_since = NULL, updated_at = excluded.updated_at`;

/** The arguments of {@link UPSERT_REPLICATION_PACKET_SQL}. */
export function replicationPacketArgs(
  packet: number,
  info: ReplicationArchiveInfo,
  rowCount: number,
  fileName: string,
  at: string,
): (string | number | null)[] {
  const { format, schemaSequence, timestamp, dbmirrorVersion } = info;
  return [packet, format, schemaSequence, timestamp, dbmirrorVersion, rowCount, fileName, at];
}

function upsertReplicationPacket(
  sqlite: Database.Database,
  packet: number,
  info: ReplicationArchiveInfo,
  rowCount: number,
  fileName: string,
  at: string,
): void {
  cachedOn(sqlite, UPSERT_REPLICATION_PACKET_SQL).run(
    ...replicationPacketArgs(packet, info, rowCount, fileName, at),
  );
}

/** (packet): clears the packet's `removal-unresolved` event before it is written again. */
export const DELETE_UNRESOLVED_SQL = `DELETE FROM events WHERE packet = ? AND kind = 'removal-unresolved'`;
/** (at, packet, message). */
export const INSERT_UNRESOLVED_SQL = `INSERT INTO events (at, packet, kind, message) VALUES (?, ?, 'removal-unresolved', ?)`;

/** The `removal-unresolved` event's message for `rows` (non-empty) of `packet`: the first 20 named. */
export function unresolvedMessage(packet: number, rows: readonly UnresolvedRemoval[]): string {
  const shown = rows.slice(0, 20).map((row) => `${row.table} id ${row.id ?? 'NULL'}`);
  const more = rows.length > shown.length ? ` and ${rows.length - shown.length} more` : '';
  return (
    `${rows.length} deleted entity row(s) of packet ${packet} have no known MBID (no stored packet shows their gid; ` +
    `v1 packets keep only the key columns of deleted rows): ${shown.join(', ')}${more}`
  );
}

/** Replaces the packet's `removal-unresolved` event: deletions whose MBID is unknown are reported, never dropped silently. */
function recordUnresolved(
  sqlite: Database.Database,
  packet: number,
  rows: UnresolvedRemoval[],
  at: string,
): void {
  cachedOn(sqlite, DELETE_UNRESOLVED_SQL).run(packet);
  if (rows.length === 0) return;
  cachedOn(sqlite, INSERT_UNRESOLVED_SQL).run(at, packet, unresolvedMessage(packet, rows));
}

/** A `row_changes` row without its position. */
type RowChangeRecord = Omit<RowChangeRow, 'packet' | 'ord'>;

/** A `row_changes` row as a {@link RowChange} (JSON columns parsed). */
export function rowChangeOf(record: RowChangeRecord): RowChange {
  const json = (text: string | null) =>
    text === null ? null : (JSON.parse(text) as Record<string, unknown>);
  return { ...record, keys: json(record.keys), oldData: json(record.oldData), newData: json(record.newData) };
}

/**
 * The stored row changes of `packet` in apply order, one at a time (the connection is busy until
 * the iteration ends).
 */
export function* iterateRowChanges(store: Store, packet: number): Generator<RowChange> {
  const rows = store.sqlite
    .prepare(
      `SELECT seqid, xid, table_name AS "table", op, keys, old_data AS oldData, new_data AS newData, timestamp
       FROM row_changes WHERE packet = ? ORDER BY ord`,
    )
    .iterate(packet) as IterableIterator<RowChangeRecord>;
  for (const record of rows) yield rowChangeOf(record);
}

/**
 * Reads the verified archive at `archivePath` into `staging` (feed/replication/archive.ts) for
 * either store's writer; the abort signal is checked once it is read.
 * @throws ArchiveError naming packet, member and line; the abort reason.
 */
export async function stageArchive(
  archivePath: string,
  staging: ReplicationSink,
  packet: number,
  fileName: string,
  options: Pick<StoreReplicationOptions, 'signal' | 'maxBytes'>,
): Promise<ReplicationArchiveInfo> {
  const { signal, maxBytes } = options;
  const info = await readReplicationArchive(archivePath, staging, { packet, fileName, signal, maxBytes });
  signal?.throwIfAborted();
  return info;
}

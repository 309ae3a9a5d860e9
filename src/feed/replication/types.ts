/**
 * Shapes of replication packet contents (FEED.md, Replication packet archives).
 */

/** Row operation: `i` insert, `u` update, `d` delete. */
export type RowOp = 'i' | 'u' | 'd';

/** Packet format, told by the archive's members: V2 has `DBMIRROR_VERSION` and `pending_*`. */
export type ReplicationFormat = 'V1' | 'V2';

/**
 * One row change of a replication packet, as a consumer applies it.
 * - v2: `oldData` / `newData` are the whole rows with their JSON types; `keys` are the table's
 *   primary key columns (from `pending_keys`) taken from `oldData` (update, delete) or `newData`
 *   (insert), null when `pending_keys` is missing or does not list the table.
 * - v1: every value is text or null. Insert: `newData` (keys null: v1 names no key for inserts).
 *   Update: `keys` identify the row, `newData` the values, `oldData` null. Delete: `keys` and
 *   `oldData` both hold what the packet kept of the old row (its key columns).
 */
export interface RowChange {
  seqid: number;
  xid: number;
  /** `schema.table`, unquoted, e.g. `musicbrainz.artist`. */
  table: string;
  op: RowOp;
  /** Primary key column → value. */
  keys: Record<string, unknown> | null;
  oldData: Record<string, unknown> | null;
  newData: Record<string, unknown> | null;
  /** Commit time of the transaction (ISO 8601 UTC, from `pending_ts` by xid); null in v1. */
  timestamp: string | null;
}

/** One line of v2 `mbdump/pending_data`; the row images stay JSON text (validated when stored). */
export interface PendingDataRecord {
  seqid: number;
  table: string;
  op: RowOp;
  xid: number;
  /** JSON object text of the row before the change; null for inserts. */
  oldJson: string | null;
  /** JSON object text of the row after the change; null for deletes. */
  newJson: string | null;
}

/** One line of v2 `mbdump/pending_keys`: a table's primary key columns, in key order. */
export interface PendingKeysRecord {
  table: string;
  columns: string[];
}

/** One line of v2 `mbdump/pending_ts`: a transaction's commit time (ISO 8601 UTC). */
export interface PendingTsRecord {
  xid: number;
  timestamp: string;
}

/** One line of v1 `mbdump/dbmirror_pending` (or `Pending`). */
export interface V1PendingRecord {
  seqid: number;
  table: string;
  op: RowOp;
  xid: number;
}

/** One line of v1 `mbdump/dbmirror_pendingdata` (or `PendingData`): key (`t`) or value (`f`) columns. */
export interface V1PendingDataRecord {
  seqid: number;
  isKey: boolean;
  data: Record<string, string | null>;
}

/**
 * Receives the parsed lines of a packet's data members in archive order. Methods are synchronous
 * (storing keeps pace with decompression); a throw aborts the read and is reported with the
 * member and line.
 */
export interface ReplicationSink {
  pendingData(record: PendingDataRecord, line: number): void;
  pendingKeys(record: PendingKeysRecord, line: number): void;
  pendingTs(record: PendingTsRecord, line: number): void;
  v1Pending(record: V1PendingRecord, line: number): void;
  v1PendingData(record: V1PendingDataRecord, line: number): void;
}

/** What a replication packet archive held besides its rows. */
export interface ReplicationArchiveInfo {
  format: ReplicationFormat;
  replicationSequence: number;
  schemaSequence: number;
  /** `TIMESTAMP` as ISO 8601 UTC. */
  timestamp: string;
  /** `DBMIRROR_VERSION` (2 for V2); null in V1. */
  dbmirrorVersion: number | null;
  /** Data members read, by the sink method that received their lines → name in the archive. */
  members: Partial<Record<keyof ReplicationSink, string>>;
  /** Whether `mbdump/pending_keys` was present (V2). */
  hasKeys: boolean;
  /** Lines read per data member. */
  lineCounts: Record<string, number>;
}

import type { EntityType } from '../feed/entities.js';
import type { RowOp } from '../feed/replication/types.js';
import type { Store } from './client.js';
import { cachedStatement, limitClause } from './statements.js';

/**
 * Read queries over stored replication packets (issue 3): the `replication_packets` row of a
 * packet, its per-table counts, its row changes in apply order (keyset pages on `ord`) and the
 * removals derived from it. Writes live in `src/sync/replication.ts`.
 */

/** A `replication_packets` row. Times are ISO 8601 UTC. */
export interface ReplicationPacketRow {
  packet: number;
  /** SYNCED | FAILED | MISSING */
  status: string;
  /** V1 | V2; null unless SYNCED. */
  format: 'V1' | 'V2' | null;
  schemaSequence: number | null;
  /** Archive `TIMESTAMP`; null unless SYNCED. */
  timestamp: string | null;
  dbmirrorVersion: number | null;
  rowCount: number;
  /** Feed-root-relative name, e.g. `replication-186100-v2.tar.bz2`. */
  fileName: string | null;
  error: string | null;
  attempts: number;
}

/** A stored replication packet: a {@link ReplicationPacketRow} with status SYNCED. */
export type StoredReplicationPacketRow = ReplicationPacketRow & {
  format: 'V1' | 'V2';
  schemaSequence: number;
  timestamp: string;
};

/** Row counts of one table in one packet. */
export interface TableChangesRow {
  /** `schema.table` */
  table: string;
  inserts: number;
  updates: number;
  deletes: number;
}

/** A `row_changes` row as stored: JSON columns are text (JSON objects or null). */
export interface RowChangeRow {
  packet: number;
  /** Position in upstream's apply order, from 0 within the packet. */
  ord: number;
  seqid: number;
  xid: number;
  /** `schema.table`, unquoted. */
  table: string;
  op: RowOp;
  keys: string | null;
  oldData: string | null;
  newData: string | null;
  /** Commit time (ISO 8601 UTC); null in v1 packets. */
  timestamp: string | null;
}

/** Optional filters of a packet's row changes. */
export interface RowChangeFilter {
  /** `schema.table`, unquoted. */
  table?: string;
  op?: RowOp;
}

/** A `removals` row with its packet's TIMESTAMP. */
export interface RemovalRow {
  mbid: string;
  entity: EntityType;
  packet: number;
  kind: 'DELETED' | 'MERGED';
  mergedInto: string | null;
  /** TIMESTAMP of the replication packet that showed it (ISO 8601 UTC). */
  timestamp: string | null;
}

// Aliases quoted and JSON read as text: the statements below are written once for SQLite and
// PostgreSQL (db/postgres/replicationReads.ts), whose jsonb columns give their JSON text back.
const PACKET_COLUMNS = `packet, status, format, schema_sequence AS "schemaSequence", timestamp,
  dbmirror_version AS "dbmirrorVersion", row_count AS "rowCount", file_name AS "fileName", error, attempts`;
const ROW_COLUMNS = `packet, ord, seqid, xid, table_name AS "table", op, CAST(keys AS TEXT) AS keys,
  CAST(old_data AS TEXT) AS "oldData", CAST(new_data AS TEXT) AS "newData", timestamp`;
const REMOVAL_COLUMNS = `mbid, entity, packet, kind, merged_into AS "mergedInto",
  (SELECT r.timestamp FROM replication_packets r WHERE r.packet = removals.packet) AS timestamp`;

/** The `replication_packets` row of `packet` (any status), or undefined when never tried. */
export function replicationPacketRow(store: Store, packet: number): ReplicationPacketRow | undefined {
  return cachedStatement(store, PACKET_ROW_SQL).get(packet) as ReplicationPacketRow | undefined;
}

/** (packet) → its {@link ReplicationPacketRow}; written once for SQLite and PostgreSQL. */
export const PACKET_ROW_SQL = `SELECT ${PACKET_COLUMNS} FROM replication_packets WHERE packet = ?`;

/** A replication packet row when it is stored (SYNCED), else undefined: the rule of both stores. */
export function storedRow(row: ReplicationPacketRow | undefined): StoredReplicationPacketRow | undefined {
  return row?.status === 'SYNCED' ? (row as StoredReplicationPacketRow) : undefined;
}

/** The replication packet of `packet` when it is stored (SYNCED), else undefined. */
export function storedReplicationPacket(
  store: Store,
  packet: number,
): StoredReplicationPacketRow | undefined {
  return storedRow(replicationPacketRow(store, packet));
}

/** Highest packet whose replication packet is stored, or undefined when none is. */
export function highestStoredReplicationPacket(store: Store): number | undefined {
  const row = store.sqlite.prepare(HIGHEST_STORED_SQL).get() as { n: number | null };
  return row.n ?? undefined;
}

/**
 * Packets below `below` whose replication packet is not stored (MISSING, or FAILED or PENDING on a
 * complete packet, as an earlier version could leave them), ascending: the sync asks for them again.
 */
export function missingReplicationPackets(store: Store, below: number): number[] {
  return (store.sqlite.prepare(MISSING_PACKETS_SQL).all(below) as { packet: number }[]).map((r) => r.packet);
}

/**
 * (packet) → {@link TableChangesRow}s by table name in code point order (`l_artist_artist` before
 * `label`); written once for SQLite and PostgreSQL: `collate` is '' on SQLite (binary) and
 * CODE_POINT_ORDER (db/postgres/sql.ts) on PostgreSQL, whose database may use a language's collation.
 */
export const tableChangesSql = (
  collate: string,
) => `SELECT table_name AS "table", sum(CASE WHEN op = 'i' THEN 1 ELSE 0 END) AS inserts,
    sum(CASE WHEN op = 'u' THEN 1 ELSE 0 END) AS updates, sum(CASE WHEN op = 'd' THEN 1 ELSE 0 END) AS deletes
  FROM row_changes WHERE packet = ? GROUP BY table_name ORDER BY table_name${collate}`;

/** (below) → replication packets below it not stored, ascending; written once for SQLite and PostgreSQL. */
export const MISSING_PACKETS_SQL = `SELECT packet FROM replication_packets
  WHERE status IN ('MISSING', 'FAILED', 'PENDING') AND packet < ? ORDER BY packet`;

/** () → n, the highest stored replication packet; written once for SQLite and PostgreSQL. */
export const HIGHEST_STORED_SQL = "SELECT max(packet) AS n FROM replication_packets WHERE status = 'SYNCED'";

/** (packet) → status of its replication packet; written once for SQLite and PostgreSQL. */
export const REPLICATION_STATUS_SQL = 'SELECT status FROM replication_packets WHERE packet = ?';

/** Inserts, updates and deletes per table of one packet, sorted by table name. */
export function tableChangesOf(store: Store, packet: number): TableChangesRow[] {
  return store.sqlite.prepare(tableChangesSql('')).all(packet) as TableChangesRow[];
}

function rowFilter(filter: RowChangeFilter): { sql: string; params: string[] } {
  const terms: string[] = [];
  const params: string[] = [];
  if (filter.table !== undefined) {
    terms.push('table_name = ?');
    params.push(filter.table);
  }
  if (filter.op !== undefined) {
    terms.push('op = ?');
    params.push(filter.op);
  }
  return { sql: terms.map((term) => ` AND ${term}`).join(''), params };
}

/**
 * The statement of a row change page, written once for SQLite and PostgreSQL: its text (`limit` a
 * LIMIT clause) and parameters but the limit's.
 */
export function rowChangesPageSql(
  packet: number,
  filter: RowChangeFilter,
  afterOrd: number,
  limit: string,
): { sql: string; params: unknown[] } {
  const where = rowFilter(filter);
  return {
    sql: `SELECT ${ROW_COLUMNS} FROM row_changes WHERE packet = ?${where.sql} AND ord > ? ORDER BY ord ${limit}`,
    params: [packet, ...where.params, afterOrd],
  };
}

/** The statement of {@link rowChangeCount}, written once for SQLite and PostgreSQL. */
export function rowChangeCountSql(
  packet: number,
  filter: RowChangeFilter,
): { sql: string; params: unknown[] } {
  const where = rowFilter(filter);
  return {
    sql: `SELECT count(*) FROM row_changes WHERE packet = ?${where.sql}`,
    params: [packet, ...where.params],
  };
}

/**
 * Up to `limit` row changes of `packet` after apply position `afterOrd` (-1: from the first),
 * in apply order, optionally of one table and operation.
 */
export function rowChangesPage(
  store: Store,
  packet: number,
  filter: RowChangeFilter,
  afterOrd: number,
  limit: number,
): RowChangeRow[] {
  const { sql, params } = rowChangesPageSql(packet, filter, afterOrd, limitClause(limit));
  return cachedStatement(store, sql).all(...params) as RowChangeRow[];
}

/** Number of row changes of `packet` matching `filter`. */
export function rowChangeCount(store: Store, packet: number, filter: RowChangeFilter): number {
  const { sql, params } = rowChangeCountSql(packet, filter);
  return cachedStatement(store, sql)
    .pluck()
    .get(...params) as number;
}

/** Removals of packets `from`..`to` (inclusive), optionally of one entity type. */
export interface RemovalRange {
  from: number;
  to: number;
  entity?: EntityType;
}

/** Position of a removal in the order of {@link removalsPage}: packet, MBID, kind. */
export interface RemovalKey {
  packet: number;
  mbid: string;
  kind: string;
}

/**
 * The statements of the removal reads, written once for both stores (`?` parameters; numbered for
 * PostgreSQL by db/postgres/sql.ts `pgSql`) with the parameters of a range, in order. The page
 * statement ends before its LIMIT: SQLite writes it into the text (statements.ts `limitClause`),
 * PostgreSQL binds it.
 */
export const REMOVAL_SQL = {
  /**
   * The newest removal of an MBID. Of a deletion and a merge in one packet the merge, which names
   * the target, wins, as in the current state (currentQueries.ts).
   */
  ofMbid: `SELECT ${REMOVAL_COLUMNS} FROM removals WHERE mbid = ? ORDER BY packet DESC, kind DESC LIMIT 1`,
  count: (range: RemovalRange) => `SELECT count(*) AS n FROM removals WHERE ${removalWhere(range).sql}`,
  page: (range: RemovalRange) =>
    `SELECT ${REMOVAL_COLUMNS} FROM removals WHERE ${removalWhere(range).sql} AND (packet, mbid, kind) > (?, ?, ?)
     ORDER BY packet, mbid, kind`,
};

/** The parameters of {@link REMOVAL_SQL}'s `count` (`page`: then the key after which it starts). */
export function removalParams(range: RemovalRange): (string | number)[] {
  return removalWhere(range).params;
}

/** The key parameters of {@link REMOVAL_SQL}'s `page`: after `after`, or from the first. */
export function removalStart(after: RemovalKey | undefined): (string | number)[] {
  return after ? [after.packet, after.mbid, after.kind] : [-1, '', ''];
}

function removalWhere(range: RemovalRange): { sql: string; params: (string | number)[] } {
  const params: (string | number)[] = [range.from, range.to];
  if (range.entity !== undefined) params.push(range.entity);
  return { sql: `packet BETWEEN ? AND ?${range.entity !== undefined ? ' AND entity = ?' : ''}`, params };
}

/** Number of removals in `range` (reads every one of them: only when a query asks). */
export function removalCount(store: Store, range: RemovalRange): number {
  return (cachedStatement(store, REMOVAL_SQL.count(range)).get(...removalParams(range)) as { n: number }).n;
}

/**
 * Up to `limit` removals in `range` after `after` (from the first when undefined), ordered by
 * packet, MBID, kind: a seek on the primary key (or `removals_entity` with an entity type), however
 * many removals are stored.
 */
export function removalsPage(
  store: Store,
  range: RemovalRange,
  after: RemovalKey | undefined,
  limit: number,
): RemovalRow[] {
  return cachedStatement(store, `${REMOVAL_SQL.page(range)} ${limitClause(limit)}`).all(
    ...removalParams(range),
    ...removalStart(after),
  ) as RemovalRow[];
}

/**
 * The newest removal of `mbid` (lower-case), or undefined when no stored packet removed it; of a
 * deletion and a merge in one packet, the merge.
 */
export function removalOfMbid(store: Store, mbid: string): RemovalRow | undefined {
  return cachedStatement(store, REMOVAL_SQL.ofMbid).get(mbid) as RemovalRow | undefined;
}

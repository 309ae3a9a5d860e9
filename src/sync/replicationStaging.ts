import type Database from 'better-sqlite3';
import type {
  PendingDataRecord,
  PendingKeysRecord,
  PendingTsRecord,
  ReplicationArchiveInfo,
  ReplicationSink,
  V1PendingDataRecord,
  V1PendingRecord,
} from '../feed/replication/types.js';
import { notObjectError, STAGING_TABLES, stagingSql, type V1Problem, v1Error } from './replicationSql.js';

// A packet's members arrive in tar order (v2: data before keys and timestamps; v1: rows before
// their data), and a packet can hold hundreds of thousands of rows. So rows are staged in TEMP
// tables (this connection only, rolled back with the transaction) and SQL joins keys, data and
// timestamps and computes upstream's apply order at the end (replicationSql.ts), instead of
// holding rows in JS. The tables stay for the connection, emptied after each packet: a CREATE or
// DROP is a schema change, after which SQLite prepares every statement of the connection again
// (the ingest's included), and dropping and creating them cost nine such changes per packet.
const SQL = stagingSql('sqlite');

const CREATE = `
  CREATE TEMP TABLE IF NOT EXISTS livefeed_rp_change (
    seqid INTEGER PRIMARY KEY, xid INTEGER NOT NULL, tbl TEXT NOT NULL, op TEXT NOT NULL,
    old TEXT, new TEXT, line INTEGER NOT NULL);
  CREATE TEMP TABLE IF NOT EXISTS livefeed_rp_v1data (
    seqid INTEGER NOT NULL, is_key INTEGER NOT NULL, data TEXT NOT NULL, line INTEGER NOT NULL,
    PRIMARY KEY (seqid, is_key)) WITHOUT ROWID;
  CREATE TEMP TABLE IF NOT EXISTS livefeed_rp_keys (
    tbl TEXT NOT NULL, pos INTEGER NOT NULL, col TEXT NOT NULL, PRIMARY KEY (tbl, pos)) WITHOUT ROWID;
  CREATE TEMP TABLE IF NOT EXISTS livefeed_rp_ts (xid INTEGER PRIMARY KEY, ts TEXT NOT NULL);
  CREATE TEMP TABLE IF NOT EXISTS livefeed_rp_order (seqid INTEGER PRIMARY KEY, ord INTEGER NOT NULL);`;

/** First v2 row whose olddata/newdata is not a JSON object (PostgreSQL checks them in JS as they are staged). */
const BAD_JSON = `
  SELECT line, CASE WHEN ${notObject('old')} THEN 'olddata' ELSE 'newdata' END AS col
  FROM temp.livefeed_rp_change WHERE ${notObject('old')} OR ${notObject('new')} ORDER BY line LIMIT 1`;

function notObject(column: string): string {
  // CASE keeps json_type away from invalid text (it would raise an error without a line number).
  return `(${column} IS NOT NULL AND (CASE WHEN json_valid(${column}) THEN json_type(${column}) END) IS NOT 'object')`;
}

/**
 * Stages one packet's parsed lines in TEMP tables of `sqlite` (a {@link ReplicationSink}) and then
 * writes them to `row_changes` in apply order. Use inside the packet's transaction; call
 * {@link PacketStaging.clear} when done.
 */
export class PacketStaging implements ReplicationSink {
  private readonly insertChange: Database.Statement;
  private readonly insertV1Data: Database.Statement;
  private readonly insertKey: Database.Statement;
  private readonly insertTs: Database.Statement;

  constructor(private readonly sqlite: Database.Database) {
    sqlite.exec(CREATE);
    this.clear();
    this.insertChange = sqlite.prepare(
      'INSERT INTO temp.livefeed_rp_change (seqid, xid, tbl, op, old, new, line) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.insertV1Data = sqlite.prepare(
      'INSERT INTO temp.livefeed_rp_v1data (seqid, is_key, data, line) VALUES (?, ?, ?, ?)',
    );
    this.insertKey = sqlite.prepare('INSERT INTO temp.livefeed_rp_keys (tbl, pos, col) VALUES (?, ?, ?)');
    this.insertTs = sqlite.prepare('INSERT INTO temp.livefeed_rp_ts (xid, ts) VALUES (?, ?)');
  }

  pendingData(r: PendingDataRecord, line: number): void {
    unique(
      () => this.insertChange.run(r.seqid, r.xid, r.table, r.op, r.oldJson, r.newJson, line),
      `seqid ${r.seqid}`,
    );
  }

  v1Pending(r: V1PendingRecord, line: number): void {
    unique(() => this.insertChange.run(r.seqid, r.xid, r.table, r.op, null, null, line), `seqid ${r.seqid}`);
  }

  v1PendingData(r: V1PendingDataRecord, line: number): void {
    const what = `${r.isKey ? 'key' : 'value'} data of seqid ${r.seqid}`;
    unique(() => this.insertV1Data.run(r.seqid, r.isKey ? 1 : 0, JSON.stringify(r.data), line), what);
  }

  pendingKeys(r: PendingKeysRecord): void {
    unique(() => {
      for (const [pos, col] of r.columns.entries()) this.insertKey.run(r.table, pos, col);
    }, `table ${r.table}`);
  }

  pendingTs(r: PendingTsRecord): void {
    unique(() => this.insertTs.run(r.xid, r.timestamp), `xid ${r.xid}`);
  }

  /**
   * Checks the staged rows, completes them (v2 keys; v1 keys/old/new from its data rows) and
   * inserts them into `row_changes` for `packet` in apply order.
   * @returns the number of rows inserted.
   * @throws ArchiveError naming member and line (prefixed with `where`) for a v2 row image that is
   *   not a JSON object, a v1 data row without its pending row, or a v1 row missing its data.
   */
  finish(info: ReplicationArchiveInfo, packet: number, where: string): number {
    if (info.format === 'V2') this.checkV2(info, where);
    else this.checkV1(info, where);
    this.sqlite.exec(SQL.applyOrder);
    return this.sqlite.prepare(SQL.insertRowChanges(info.format)).run(packet).changes;
  }

  private checkV2(info: ReplicationArchiveInfo, where: string): void {
    const bad = this.sqlite.prepare(BAD_JSON).get() as { line: number; col: string } | undefined;
    if (bad) throw notObjectError(bad.col, bad.line, info, where);
  }

  private checkV1(info: ReplicationArchiveInfo, where: string): void {
    const orphan = this.sqlite.prepare(SQL.v1Orphan).get() as V1Problem | undefined;
    if (orphan) throw v1Error('orphan', orphan, info, where);
    const missing = this.sqlite.prepare(SQL.v1Missing).get() as V1Problem | undefined;
    if (missing) throw v1Error('missing', missing, info, where);
  }

  /** Empties the TEMP tables (also run before a packet is staged, in case an earlier run died mid-way). */
  clear(): void {
    for (const table of STAGING_TABLES) this.sqlite.exec(`DELETE FROM temp.${table}`);
  }
}

/** Runs `insert`, turning a primary key conflict into a readable "duplicate ..." error. */
function unique(insert: () => unknown, what: string): void {
  try {
    insert();
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT'))
      throw new Error(`duplicate ${what}`);
    throw error;
  }
}

import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { pgRow, pgSql } from '../../db/postgres/sql.js';
import type {
  PendingDataRecord,
  PendingKeysRecord,
  PendingTsRecord,
  ReplicationArchiveInfo,
  ReplicationSink,
  V1PendingDataRecord,
  V1PendingRecord,
} from '../../feed/replication/types.js';
import { notObjectError, stagingSql, type V1Problem, v1Error } from '../replicationSql.js';
import { SPOOL_MEMORY_CHARS, TextSpool } from './textSpool.js';

/**
 * The PostgreSQL twin of sync/replicationStaging.ts (issue 17). The archive reader hands over lines
 * synchronously, and a PostgreSQL connection takes one COPY at a time, asynchronously: so each
 * staging table's rows are kept as CSV text while the archive is read (about the size of the
 * decompressed members: in memory up to a bound, then in an unlinked temporary file, textSpool.ts),
 * then copied with `COPY ... FROM STDIN` into TEMP tables dropped at COMMIT,
 * where the statements of replicationSql.ts join them into `row_changes` (jsonb). Duplicates are
 * refused as the lines arrive, and v2 row images are checked to be JSON objects here (PostgreSQL 15
 * has no way to test a text for JSON without failing the statement), naming member and line as
 * SQLite does; checked, they are staged as jsonb, so the COPY parses each once (not again for the
 * INSERT and for each key column: a third of a large packet's time, measured).
 */

const SQL = stagingSql('postgres');

const CREATE = `
  CREATE TEMP TABLE livefeed_rp_change (
    seqid bigint PRIMARY KEY, xid bigint NOT NULL, tbl text NOT NULL, op text NOT NULL,
    old jsonb, new jsonb, line integer NOT NULL) ON COMMIT DROP;
  CREATE TEMP TABLE livefeed_rp_v1data (
    seqid bigint NOT NULL, is_key integer NOT NULL, data text NOT NULL, line integer NOT NULL,
    PRIMARY KEY (seqid, is_key)) ON COMMIT DROP;
  CREATE TEMP TABLE livefeed_rp_keys (
    tbl text NOT NULL, pos integer NOT NULL, col text NOT NULL, PRIMARY KEY (tbl, pos)) ON COMMIT DROP;
  CREATE TEMP TABLE livefeed_rp_ts (xid bigint PRIMARY KEY, ts text NOT NULL) ON COMMIT DROP;`;

/** The COPY of each staging table, in the column order of its rows. */
const COPY: Record<'change' | 'v1data' | 'keys' | 'ts', string> = {
  change:
    'COPY pg_temp.livefeed_rp_change (seqid, xid, tbl, op, old, new, line) FROM STDIN WITH (FORMAT csv)',
  v1data: 'COPY pg_temp.livefeed_rp_v1data (seqid, is_key, data, line) FROM STDIN WITH (FORMAT csv)',
  keys: 'COPY pg_temp.livefeed_rp_keys (tbl, pos, col) FROM STDIN WITH (FORMAT csv)',
  ts: 'COPY pg_temp.livefeed_rp_ts (xid, ts) FROM STDIN WITH (FORMAT csv)',
};

/** One CSV field: NULL unquoted and empty, text quoted with its quotes doubled. */
function field(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  return `"${value.replaceAll('"', '""')}"`;
}

function csv(...values: (string | number | null)[]): string {
  return `${values.map(field).join(',')}\n`;
}

/** True when `text` is a JSON object. */
function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * Stages one packet's parsed lines (a {@link ReplicationSink}), then, in the packet's transaction on
 * `client`, copies them into TEMP tables and writes them to `row_changes` in apply order.
 */
export class PostgresPacketStaging implements ReplicationSink {
  private readonly rows: Record<keyof typeof COPY, TextSpool>;

  /** @param memoryChars characters of COPY text each table holds in memory before its file. */
  constructor(memoryChars = SPOOL_MEMORY_CHARS) {
    this.rows = {
      change: new TextSpool(memoryChars),
      v1data: new TextSpool(memoryChars),
      keys: new TextSpool(memoryChars),
      ts: new TextSpool(memoryChars),
    };
  }

  private readonly seen = {
    change: new Set<number>(),
    v1data: new Set<string>(),
    keys: new Set<string>(),
    ts: new Set<number>(),
  };
  /** The first v2 line whose row image is not a JSON object. */
  private badJson: { line: number; column: string } | undefined;

  pendingData(r: PendingDataRecord, line: number): void {
    this.once('change', r.seqid, `seqid ${r.seqid}`);
    if (!this.badJson) {
      if (r.oldJson !== null && !isJsonObject(r.oldJson)) this.badJson = { line, column: 'olddata' };
      else if (r.newJson !== null && !isJsonObject(r.newJson)) this.badJson = { line, column: 'newdata' };
    }
    this.rows.change.add(csv(r.seqid, r.xid, r.table, r.op, r.oldJson, r.newJson, line));
  }

  v1Pending(r: V1PendingRecord, line: number): void {
    this.once('change', r.seqid, `seqid ${r.seqid}`);
    this.rows.change.add(csv(r.seqid, r.xid, r.table, r.op, null, null, line));
  }

  v1PendingData(r: V1PendingDataRecord, line: number): void {
    this.once('v1data', `${r.seqid}/${r.isKey}`, `${r.isKey ? 'key' : 'value'} data of seqid ${r.seqid}`);
    this.rows.v1data.add(csv(r.seqid, r.isKey ? 1 : 0, JSON.stringify(r.data), line));
  }

  pendingKeys(r: PendingKeysRecord): void {
    this.once('keys', r.table, `table ${r.table}`);
    for (const [pos, col] of r.columns.entries()) this.rows.keys.add(csv(r.table, pos, col));
  }

  pendingTs(r: PendingTsRecord): void {
    this.once('ts', r.xid, `xid ${r.xid}`);
    this.rows.ts.add(csv(r.xid, r.timestamp));
  }

  /** @throws Error `duplicate ...` for a key staged before (as SQLite's primary keys refuse it). */
  private once<K extends keyof PostgresPacketStaging['seen']>(
    table: K,
    key: number | string,
    what: string,
  ): void {
    const seen = this.seen[table] as Set<number | string>;
    if (seen.has(key)) throw new Error(`duplicate ${what}`);
    seen.add(key);
  }

  /**
   * Checks the staged rows, copies them into TEMP tables of `client`'s transaction, completes them
   * and inserts them into `row_changes` for `packet` in apply order.
   * @returns the number of rows inserted.
   * @throws ArchiveError naming member and line (prefixed with `where`) as sync/replicationStaging.ts
   *   does; PostgreSQL errors (a row image jsonb refuses, e.g. one holding `\u0000`).
   */
  async finish(
    client: pg.ClientBase,
    info: ReplicationArchiveInfo,
    packet: number,
    where: string,
  ): Promise<number> {
    if (info.format === 'V2' && this.badJson)
      throw notObjectError(this.badJson.column, this.badJson.line, info, where);
    await client.query(CREATE);
    for (const table of ['change', 'v1data', 'keys', 'ts'] as const) await this.copy(client, table);
    if (info.format === 'V1') {
      const orphan = await pgRow<V1Problem>(client, SQL.v1Orphan);
      if (orphan) throw v1Error('orphan', orphan, info, where);
      const missing = await pgRow<V1Problem>(client, SQL.v1Missing);
      if (missing) throw v1Error('missing', missing, info, where);
    }
    await client.query(SQL.applyOrder);
    const result = await client.query(pgSql(SQL.insertRowChanges(info.format)), [packet]);
    return result.rowCount ?? 0;
  }

  /** Copies the rows of `table` (their text is let go as it is sent). */
  private async copy(client: pg.ClientBase, table: keyof typeof COPY): Promise<void> {
    const rows = this.rows[table];
    if (rows.empty) return;
    await pipeline(rows.stream(), client.query(copyFrom(COPY[table])));
  }

  /** Lets go of the rows not copied (their temporary files), after {@link finish} or a failure. */
  close(): void {
    for (const rows of Object.values(this.rows)) rows.close();
  }
}

import { ArchiveError } from '../feed/errors.js';
import type { ReplicationArchiveInfo, ReplicationFormat, RowOp } from '../feed/replication/types.js';

/**
 * The set-based SQL that turns one packet's staged lines into `row_changes`, written once for both
 * stores: SQLite (replicationStaging.ts: TEMP tables of the writer's connection) and PostgreSQL
 * (postgres/replicationStaging.ts: TEMP tables dropped at COMMIT). They differ in where TEMP tables
 * live (`temp.` / `pg_temp.`), in the JSON functions (SQLite JSON text, PostgreSQL `jsonb`) and in
 * how a table is made from a query; the joins, checks and apply order are the same statements.
 * Hand-written SQL on purpose: TEMP tables and set-based joins that a query builder does not
 * express, on the replication packet hot path (bench/RESULTS.md).
 */

/** Which store the statements are for. */
export type StagingDialect = 'sqlite' | 'postgres';

/** The staging tables, in the order they are dropped. */
export const STAGING_TABLES = [
  'livefeed_rp_change',
  'livefeed_rp_v1data',
  'livefeed_rp_keys',
  'livefeed_rp_ts',
  'livefeed_rp_order',
] as const;

/** The data rows each v1 op needs. */
export const V1_NEEDS: Record<RowOp, string> = {
  i: 'value (f) row',
  u: 'key (t) and value (f) rows',
  d: 'key (t) row',
};

/** SQL expressions over a staged row `c` giving a row change's keys, old and new data. */
interface RowColumns {
  keys: string;
  old: string;
  new: string;
}

/** The statements of `dialect` (see the module comment). */
export function stagingSql(dialect: StagingDialect) {
  const schema = dialect === 'sqlite' ? 'temp' : 'pg_temp';
  const t = (name: (typeof STAGING_TABLES)[number]) => `${schema}.${name}`;
  // JSON as each store keeps it: SQLite JSON text as is, PostgreSQL jsonb.
  const json = (expression: string) => (dialect === 'sqlite' ? expression : `(${expression})::jsonb`);
  /** A staged row's v1 key (`t`) and value (`f`) data (primary key lookups). */
  const v1Key = `(SELECT data FROM ${t('livefeed_rp_v1data')} WHERE seqid = c.seqid AND is_key = 1)`;
  const v1Value = `(SELECT data FROM ${t('livefeed_rp_v1data')} WHERE seqid = c.seqid AND is_key = 0)`;
  /** v1 rows as a consumer applies them: keys identify, values are the new row; a delete keeps what it has of the old row. */
  const v1Columns: RowColumns = {
    keys: v1Key,
    old: `CASE c.op WHEN 'd' THEN coalesce(${v1Value}, ${v1Key}) END`,
    new: `CASE WHEN c.op IN ('i', 'u') THEN ${v1Value} END`,
  };
  /** v2 rows are whole; keys are the table's key columns (pending_keys order) from the old row, or the new row for inserts. */
  const objectOf =
    dialect === 'sqlite'
      ? 'json_group_object(k.col, coalesce(c.old, c.new) -> k.col ORDER BY k.pos)'
      : 'jsonb_object_agg(k.col, coalesce(c.old, c.new)::jsonb -> k.col ORDER BY k.pos)';
  const v2Columns: RowColumns = {
    keys: `(SELECT CASE WHEN count(*) > 0 THEN ${objectOf} END FROM ${t('livefeed_rp_keys')} k WHERE k.tbl = c.tbl)`,
    old: 'c.old',
    new: 'c.new',
  };
  // SQLite keeps its staging tables for the connection (replicationStaging.ts); PostgreSQL's are
  // dropped at COMMIT.
  const intoOrder =
    dialect === 'sqlite'
      ? `INSERT INTO ${t('livefeed_rp_order')} (seqid, ord)`
      : 'CREATE TEMP TABLE livefeed_rp_order ON COMMIT DROP AS';
  return {
    /** () → line, seqid: the first v1 data row whose seqid has no dbmirror_pending row. */
    v1Orphan: `
      SELECT d.line, d.seqid FROM ${t('livefeed_rp_v1data')} d
      WHERE NOT EXISTS (SELECT 1 FROM ${t('livefeed_rp_change')} c WHERE c.seqid = d.seqid) ORDER BY d.line LIMIT 1`,
    /** () → line, seqid, op: the first v1 row lacking the data its op needs. */
    v1Missing: `
      SELECT c.line, c.seqid, c.op FROM ${t('livefeed_rp_change')} c
      WHERE (c.op IN ('i', 'u') AND ${v1Value} IS NULL) OR (c.op = 'u' AND ${v1Key} IS NULL)
         OR (c.op = 'd' AND ${v1Key} IS NULL AND ${v1Value} IS NULL)
      ORDER BY c.line LIMIT 1`,
    /**
     * Upstream's apply order: transactions by their highest seqid, rows by seqid; ord counts from
     * 0. Computed over (seqid, ord) pairs first so that the wide rows are read once, in order, by key.
     */
    applyOrder: `
      ${intoOrder}
      SELECT c.seqid, row_number() OVER (ORDER BY t.last, c.seqid) - 1 AS ord
      FROM ${t('livefeed_rp_change')} c
      JOIN (SELECT xid, max(seqid) AS last FROM ${t('livefeed_rp_change')} GROUP BY xid) t ON t.xid = c.xid`,
    /** (packet): the staged rows into `row_changes` in apply order. */
    insertRowChanges(format: ReplicationFormat): string {
      const columns = format === 'V2' ? v2Columns : v1Columns;
      return `
      INSERT INTO row_changes (packet, ord, seqid, xid, table_name, op, keys, old_data, new_data, timestamp)
      SELECT CAST(? AS INTEGER), o.ord, c.seqid, c.xid, c.tbl, c.op, ${json(columns.keys)}, ${json(columns.old)},
        ${json(columns.new)}, ts.ts
      FROM ${t('livefeed_rp_order')} o
      JOIN ${t('livefeed_rp_change')} c ON c.seqid = o.seqid
      LEFT JOIN ${t('livefeed_rp_ts')} ts ON ts.xid = c.xid
      ORDER BY o.ord`;
    },
  };
}

/** The first row {@link stagingSql}'s `v1Orphan` or `v1Missing` found. */
export interface V1Problem {
  line: number;
  seqid: number;
  op?: RowOp;
}

/**
 * The ArchiveError of a v1 packet whose data row has no pending row (`orphan`) or whose row lacks
 * the data its op needs (`missing`), naming member and line, prefixed with `where`.
 */
export function v1Error(
  kind: 'orphan' | 'missing',
  problem: V1Problem,
  info: ReplicationArchiveInfo,
  where: string,
): ArchiveError {
  const { v1Pending, v1PendingData } = info.members;
  if (kind === 'orphan')
    return new ArchiveError(
      `${where}: ${v1PendingData} line ${problem.line}: seqid ${problem.seqid} is not in ${v1Pending}`,
    );
  const op = problem.op!;
  return new ArchiveError(
    `${where}: ${v1Pending} line ${problem.line}: op ${op} of seqid ${problem.seqid} lacks its ` +
      `${V1_NEEDS[op]} in ${v1PendingData}`,
  );
}

/** The ArchiveError of a v2 row image (`olddata` or `newdata`) that is not a JSON object. */
export function notObjectError(
  column: string,
  line: number,
  info: ReplicationArchiveInfo,
  where: string,
): ArchiveError {
  return new ArchiveError(
    `${where}: ${info.members.pendingData} line ${line}: ${column} is not a JSON object`,
  );
}

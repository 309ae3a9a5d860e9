import type { Statement } from 'better-sqlite3';
import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { changeKey, dumpIdRange } from './keys.js';
import { LazyChange } from './lazyChange.js';
import { cachedStatement, limitClause } from './statements.js';

// Hand-written SQL through cachedStatement: these reads serve every GraphQL request (the changes
// page as one BLOB, keyset pages with the limit written in), measured in bench/RESULTS.md.

/** A `packets` row as the API reads it. Times are ISO 8601. */
export interface PacketRow {
  number: number;
  timestamp: string | null;
  schemaSequence: number | null;
  syncedAt: string | null;
}

/** A `dumps` row. */
export interface DumpRow {
  packet: number;
  entity: EntityType;
  status: string;
  changeCount: number;
  quarantineCount: number;
  fileName: string | null;
  error: string | null;
  attempts: number;
  nextRetryAt: string | null;
}

/** A `changes` row; `data` is the JSON dump line's UTF-8 text as bytes (valid JSON). */
export interface ChangeRow {
  id: number;
  packet: number;
  entity: EntityType;
  position: number;
  mbid: string;
  data: Buffer;
  /**
   * The line's `name`, else its `title` (null when neither is a string), when the read took it out
   * in SQL (search hits): `EntityChange.name` then needs no parse of the line.
   */
  name?: string | null;
}

/** A `feed_files` row. */
export interface FeedFileRow {
  name: string;
  packet: number;
  size: number;
  sha256: string;
  signature: string;
  fingerprint: string | null;
  fetchedAt: string;
  storedPath: string | null;
  signatureStoredPath: string | null;
}

// Aliases are quoted: PostgreSQL folds unquoted names to lower case.
const PACKET_COLUMNS = 'number, timestamp, schema_sequence AS "schemaSequence", synced_at AS "syncedAt"';

/**
 * The statements of the packet, dump and feed file reads with `?` parameters, written once for
 * SQLite (below) and PostgreSQL (db/postgres/ledgerReads.ts, numbered by `pgSql`). A page's
 * `LIMIT` is appended by each store (written in on SQLite: see `limitClause`). Packet numbers from
 * cursors are compared as bigint: `packets.number` is a 32-bit integer on PostgreSQL, and a cursor
 * may hold a larger number.
 */
export const LEDGER_SQL = {
  /** (number) → PacketRow. */
  packetByNumber: `SELECT ${PACKET_COLUMNS} FROM packets WHERE number = ?`,
  /** (before) → PacketRow, newest first; append the LIMIT. */
  packetsPage: `SELECT ${PACKET_COLUMNS} FROM packets WHERE number < CAST(? AS bigint) ORDER BY number DESC`,
  /** () → n. */
  packetCount: 'SELECT count(*) AS n FROM packets',
  /** (packet) → DumpRow. */
  dumpsOfPacket: `SELECT packet, entity, status, change_count AS "changeCount", quarantine_count AS "quarantineCount",
       file_name AS "fileName", error, attempts, next_retry_at AS "nextRetryAt" FROM dumps WHERE packet = ?`,
  /** (name) → FeedFileRow. */
  feedFileByName: `SELECT name, packet, size, sha256, signature, fingerprint, fetched_at AS "fetchedAt",
       stored_path AS "storedPath", signature_stored_path AS "signatureStoredPath" FROM feed_files WHERE name = ?`,
};

/** The packet row of `number`, or undefined. */
export function packetByNumber(store: Store, number: number): PacketRow | undefined {
  return cachedStatement(store, LEDGER_SQL.packetByNumber).get(number) as PacketRow | undefined;
}

/** Up to `limit` packets below `before` (or from the newest), newest first. */
export function packetsPage(store: Store, before: number | undefined, limit: number): PacketRow[] {
  return cachedStatement(store, `${LEDGER_SQL.packetsPage} ${limitClause(limit)}`).all(
    before ?? Number.MAX_SAFE_INTEGER,
  ) as PacketRow[];
}

/** Number of packets stored. */
export function packetCount(store: Store): number {
  return (cachedStatement(store, LEDGER_SQL.packetCount).get() as { n: number }).n;
}

/** Every stored dump of a packet. */
export function dumpsOfPacket(store: Store, packet: number): DumpRow[] {
  return cachedStatement(store, LEDGER_SQL.dumpsOfPacket).all(packet) as DumpRow[];
}

/**
 * Up to `limit` changes of one JSON dump after line `afterPosition`, in file order; with `lines`
 * false, without their lines (each read on first use: db/lazyChange.ts).
 */
export function changesPage(
  store: Store,
  packet: number,
  entity: EntityType,
  afterPosition: number,
  limit: number,
  lines = true,
): ChangeRow[] {
  const [first, last] = dumpIdRange(packet, entity);
  return pageOfChanges(
    store,
    `WHERE id > ? AND id <= ? ORDER BY id ${limitClause(limit)}`,
    lines,
    first + afterPosition,
    last,
  );
}

/** Number of changes stored for one JSON dump. */
export function changeCount(store: Store, packet: number, entity: EntityType): number {
  const [first, last] = dumpIdRange(packet, entity);
  return (
    store.sqlite.prepare('SELECT count(*) AS n FROM changes WHERE id BETWEEN ? AND ?').get(first, last) as {
      n: number;
    }
  ).n;
}

/**
 * Up to `limit` changes of an MBID after change id `afterId` (0: from the oldest), oldest first
 * (packet, then position): a seek on the `changes_mbid` index, however many versions it has. With
 * `lines` false, without their lines (each read on first use: db/lazyChange.ts).
 */
export function changesOfMbidPage(
  store: Store,
  mbid: string,
  afterId: number,
  limit: number,
  lines = true,
): ChangeRow[] {
  return pageOfChanges(
    store,
    `WHERE mbid = ? AND id > ? ORDER BY id ${limitClause(limit)}`,
    lines,
    mbid,
    afterId,
  );
}

/** Number of changes held for an MBID (every version; reads them all, so only when asked). */
export function changeCountOfMbid(store: Store, mbid: string): number {
  return store.sqlite.prepare('SELECT count(*) FROM changes WHERE mbid = ?').pluck().get(mbid) as number;
}

/**
 * One row holding the `changes` rows that `where` (WHERE, ORDER BY and LIMIT clauses) selects, as
 * comma-separated lists and, in `data`, every line's bytes back to back. Reading a page as one BLOB
 * instead of a Buffer per row took a 50-change page from about 115 to 47 µs (bench/RESULTS.md): the
 * per-value Buffer, not SQLite, was the cost. One statement is one snapshot, so the lists agree.
 */
function aggregateChanges(where: string): string {
  return `SELECT group_concat(id), group_concat(mbid), group_concat(length(CAST(data AS BLOB))),
      CAST(group_concat(data, '') AS BLOB)
    FROM (SELECT id, mbid, data FROM changes ${where})`;
}

/**
 * {@link aggregateChanges} without the lines: the ids and MBIDs of the changes `where` selects, for
 * a page that shows none of its lines. A 100-change page of the change stream without its lines:
 * 270 against 410 µs of CPU in process (bench/RESULTS.md).
 */
function aggregateChangeKeys(where: string): string {
  return `SELECT group_concat(id), group_concat(mbid) FROM (SELECT id, mbid FROM changes ${where})`;
}

/**
 * The changes `where` (WHERE, ORDER BY and LIMIT clauses over `changes`, `?` parameters) selects,
 * in ascending `id`: with their lines ({@link aggregateChanges}), or, with `lines` false, each a
 * {@link LazyChange} that reads its line only if something asks for it. The reads of the change
 * stream, of the connections of changes and of `previousChange`.
 */
export function pageOfChanges(
  store: Store,
  where: string,
  lines: boolean,
  ...params: unknown[]
): ChangeRow[] {
  if (lines) return changeRows(cachedStatement(store, aggregateChanges(where)), ...params);
  const [ids, mbids] = cachedStatement(store, aggregateChangeKeys(where))
    .raw(true)
    .get(...params) as [string | null, string];
  if (ids === null) return [];
  const mbidList = mbids.split(',');
  return inIdOrder(ids.split(',').map((id, i) => new LazyChange(store, Number(id), mbidList[i]!)));
}

// SQLite feeds the ordered subquery to the aggregates in order; should it not, the rows are sorted
// here (never observed), so the order never depends on it.
function inIdOrder<T extends { id: number }>(rows: T[]): T[] {
  for (let i = 1; i < rows.length; i++)
    if (rows[i]!.id < rows[i - 1]!.id) return rows.sort((a, b) => a.id - b.id);
  return rows;
}

type AggregateRow = [string | null, string, string, Buffer];

/**
 * Rows of an {@link aggregateChanges} statement in ascending `id`, each `data` a view of the one
 * BLOB (sorted should SQLite not feed them in order: see `inIdOrder`).
 */
function changeRows(statement: Statement, ...params: unknown[]): ChangeRow[] {
  const [ids, mbids, lengths, data] = statement.raw(true).get(...params) as AggregateRow;
  if (ids === null) return [];
  const idList = ids.split(',');
  const mbidList = mbids.split(',');
  const lengthList = lengths.split(',');
  const rows = new Array<ChangeRow>(idList.length);
  let offset = 0;
  for (let i = 0; i < idList.length; i++) {
    const end = offset + Number(lengthList[i]);
    const id = Number(idList[i]);
    // packet, entity and position are packed in the id (db/keys.ts): three lists fewer to build.
    const { packet, entity, position } = changeKey(id);
    rows[i] = { id, packet, entity, position, mbid: mbidList[i]!, data: data.subarray(offset, end) };
    offset = end;
  }
  if (offset !== data.length)
    throw new Error(`changes read: ${data.length} data bytes, lengths add up to ${offset}`);
  return inIdOrder(rows);
}

/** The feed file row named `name` (path under the feed root), or undefined. */
export function feedFileByName(store: Store, name: string): FeedFileRow | undefined {
  return cachedStatement(store, LEDGER_SQL.feedFileByName).get(name) as FeedFileRow | undefined;
}

/**
 * Parsers of one line of each replication packet data member (FEED.md, Replication packet
 * archives). Each undoes COPY escaping first, then reads the columns; errors say which column is
 * wrong (the archive reader adds packet, member and line).
 */

import { parsePgTimestamp } from '../timestamp.js';
import { splitCopyLine } from './copyText.js';
import { parsePgTextArray, parseTableName } from './identifiers.js';
import { parsePackedData } from './packedData.js';
import type {
  PendingDataRecord,
  PendingKeysRecord,
  PendingTsRecord,
  RowOp,
  V1PendingDataRecord,
  V1PendingRecord,
} from './types.js';

/** Splits a line and checks its column count. */
function columns(line: string, count: number): (string | null)[] {
  const values = splitCopyLine(line);
  if (values.length !== count) throw new Error(`expected ${count} columns, found ${values.length}`);
  return values;
}

/** A non-null column value. */
function required(value: string | null, name: string): string {
  if (value === null) throw new Error(`${name} is NULL`);
  return value;
}

/** A non-negative integer column (seqid, xid) that is exact in a JS number. */
function integer(value: string | null, name: string): number {
  const text = required(value, name);
  const number = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(number))
    throw new Error(`${name} is not an integer: ${JSON.stringify(text)}`);
  return number;
}

function operation(value: string | null): RowOp {
  const op = required(value, 'op');
  if (op !== 'i' && op !== 'u' && op !== 'd') throw new Error(`unknown op ${JSON.stringify(op)}`);
  return op;
}

function tableName(value: string | null): string {
  return parseTableName(required(value, 'tablename'));
}

/**
 * Parses a v2 `pending_data` line: `seqid, tablename, op, xid, olddata, newdata, oldctid,
 * trgdepth`. olddata/newdata stay JSON text (unescaped); an insert needs newdata, a delete olddata,
 * an update both.
 * @throws Error naming the bad column.
 */
export function parsePendingDataLine(line: string): PendingDataRecord {
  const [seqid, table, op, xid, oldJson, newJson] = columns(line, 8);
  const record: PendingDataRecord = {
    seqid: integer(seqid!, 'seqid'),
    table: tableName(table!),
    op: operation(op!),
    xid: integer(xid!, 'xid'),
    oldJson: oldJson ?? null,
    newJson: newJson ?? null,
  };
  if (record.op !== 'i' && record.oldJson === null) throw new Error(`olddata is NULL for op ${record.op}`);
  if (record.op !== 'd' && record.newJson === null) throw new Error(`newdata is NULL for op ${record.op}`);
  return record;
}

/**
 * Parses a v2 `pending_keys` line: `tablename, {col1,col2}`.
 * @throws Error naming the bad column.
 */
export function parsePendingKeysLine(line: string): PendingKeysRecord {
  const [table, keys] = columns(line, 2);
  const list = parsePgTextArray(required(keys!, 'keys'));
  if (list.length === 0) throw new Error('keys is an empty array');
  return { table: tableName(table!), columns: list };
}

/**
 * Parses a v2 `pending_ts` line: `xid, timestamptz` (timestamp → ISO 8601 UTC).
 * @throws Error naming the bad column.
 */
export function parsePendingTsLine(line: string): PendingTsRecord {
  const [xid, ts] = columns(line, 2);
  return { xid: integer(xid!, 'xid'), timestamp: parsePgTimestamp(required(ts!, 'ts')) };
}

/**
 * Parses a v1 `dbmirror_pending` line: `seqid, "schema"."table", op, xid`.
 * @throws Error naming the bad column.
 */
export function parseDbmirrorPendingLine(line: string): V1PendingRecord {
  const [seqid, table, op, xid] = columns(line, 4);
  return {
    seqid: integer(seqid!, 'seqid'),
    table: tableName(table!),
    op: operation(op!),
    xid: integer(xid!, 'xid'),
  };
}

/**
 * Parses a v1 `dbmirror_pendingdata` line: `seqid, t|f, data` (packed `"col"='value' ` pairs).
 * @throws Error naming the bad column.
 */
export function parseDbmirrorPendingDataLine(line: string): V1PendingDataRecord {
  const [seqid, isKey, data] = columns(line, 3);
  const flag = required(isKey!, 'iskey');
  if (flag !== 't' && flag !== 'f') throw new Error(`iskey is not t or f: ${JSON.stringify(flag)}`);
  return {
    seqid: integer(seqid!, 'seqid'),
    isKey: flag === 't',
    data: parsePackedData(required(data!, 'data')),
  };
}

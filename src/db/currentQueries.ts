import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { changeKey } from './keys.js';
import { LazyChange } from './lazyChange.js';
import type { ChangeRow } from './queries.js';
import { removalFilter } from './removalFilter.js';
import { readSnapshot } from './snapshot.js';
import { cachedStatement } from './statements.js';

/**
 * The current state (issue 14): per MBID its newest known version, read from two indexes that the
 * writers maintain in the same transaction as the rows they index, so it never runs ahead of or
 * behind the stored changes and costs the ingest nothing beyond the MBID index it already had:
 * - the newest JSON dump line: the largest change id of the MBID in `changes_mbid` (ids grow with
 *   packet, then position: a later line of the same packet wins over an earlier one);
 * - the newest removal: the MBID's `removals` row of the largest packet (`removals_mbid`, on
 *   mbid, packet, kind: one seek, no sort).
 * Order is by packet, and within one packet a removal wins over a JSON dump line (a JSON dump never
 * shows a removed entity, FEED.md): a JSON dump of a later packet makes a removed MBID current again,
 * an older packet's dump stored late never does. An earlier version kept a `current_state` table,
 * one more B-tree of random-UUID keys written per line (+19 % ingest, bench/RESULTS.md); migration
 * 0005 drops it.
 */

/** CURRENT: the newest version is a JSON dump line; DELETED / MERGED: a replication packet removed it. */
export type CurrentStatus = 'CURRENT' | 'DELETED' | 'MERGED';

/** The current state of one MBID, with the newest change when a JSON dump held it. */
export interface CurrentRow {
  mbid: string;
  entity: EntityType;
  status: CurrentStatus;
  /** Packet of the newest event (JSON dump line or removal). */
  packet: number;
  /** For MERGED: the MBID it was merged into, when a stored packet shows it; else null. */
  mergedInto: string | null;
  /** The newest JSON dump line of the MBID (kept after a removal); null when no JSON dump held it. */
  latest: ChangeRow | null;
}

/**
 * SQL expression: the id of the newest change of the MBID `mbid` (an SQL expression), or NULL.
 * One reverse seek in `changes_mbid` (its entries end with the rowid, so no sort).
 */
export function newestChangeIdSql(mbid: string): string {
  return `(SELECT id FROM changes WHERE mbid = ${mbid} ORDER BY id DESC LIMIT 1)`;
}

// The newest removal of an MBID: of a deletion and a merge in one packet, the merge (which names
// the target) wins.
const NEWEST_REMOVAL = (mbid: string) =>
  `(SELECT rowid FROM removals WHERE mbid = ${mbid} ORDER BY packet DESC, kind DESC LIMIT 1)`;

// `m` is a relation of MBIDs (column `mbid`). With `data`, the newest line goes out as bytes (no
// decode per request); without, only its id is read, from the index alone.
const NEWEST_COLUMNS = (data: boolean) =>
  `${data ? 'c.id' : newestChangeIdSql('m.mbid')} AS changeId, ${data ? 'CAST(c.data AS BLOB)' : 'NULL'} AS data`;
const NEWEST_LINE = (data: boolean) =>
  data ? `LEFT JOIN changes c ON c.id = ${newestChangeIdSql('m.mbid')}` : '';
const CURRENT_OF = (m: string, data: boolean) => `
  SELECT m.mbid, ${NEWEST_COLUMNS(data)},
    r.entity AS removedEntity, r.kind AS removal, r.packet AS removedPacket, r.merged_into AS mergedInto
  FROM ${m} m ${NEWEST_LINE(data)}
  LEFT JOIN removals r ON r.rowid = ${NEWEST_REMOVAL('m.mbid')}`;
// CURRENT_OF without the removals and without the MBID (RawCurrentRow's second and third columns), in
// the order of `m`, for a list whose removals the removal filter mostly rules out: the MBIDs are
// known, and making each a JS string again cost 80 of 210 µs for 100 MBIDs (bench/RESULTS.md). And
// the newest removal of each MBID of `m` that has one (RawCurrentRow's first and last four).
const NEWEST_OF = (m: string, data: boolean) =>
  `SELECT ${NEWEST_COLUMNS(data)} FROM ${m} m ${NEWEST_LINE(data)}`;
const REMOVAL_OF = (m: string) => `
  SELECT m.mbid, r.entity, r.kind, r.packet, r.merged_into
  FROM ${m} m JOIN removals r ON r.rowid = ${NEWEST_REMOVAL('m.mbid')}`;

// A row of CURRENT_OF read with `.raw()`: arrays, not objects with seven named keys (building those
// was a third of `resolve`'s statement time for 100 MBIDs on the 1M-entity database).
type RawCurrentRow = [
  mbid: string,
  changeId: number | null,
  data: Buffer | null,
  removedEntity: EntityType | null,
  removal: 'DELETED' | 'MERGED' | null,
  removedPacket: number | null,
  mergedInto: string | null,
];

/** The newest line of `mbid` from its id and, when read, its bytes (else read on first use). */
function latestOf(
  store: Store,
  mbid: string,
  changeId: number | null,
  data: Buffer | null,
): ChangeRow | null {
  if (changeId === null) return null;
  return data === null
    ? new LazyChange(store, changeId, mbid)
    : { id: changeId, ...changeKey(changeId), mbid, data };
}

function currentRowOf(store: Store, raw: RawCurrentRow): CurrentRow | undefined {
  const [mbid, changeId, data, removedEntity, removal, removedPacket, mergedInto] = raw;
  return currentRowFrom(
    mbid,
    latestOf(store, mbid, changeId, data),
    removedEntity,
    removal,
    removedPacket,
    mergedInto,
  );
}

/**
 * The rule of the current state (see the top of this file), shared by both stores: the newest
 * removal (kind, packet, entity, target; nulls when none) wins over `latest`, the newest JSON dump
 * line, when its packet is the same or newer. Undefined when neither exists. Arguments, not a
 * removal object: no allocation per row on the request path.
 */
export function currentRowFrom(
  mbid: string,
  latest: ChangeRow | null,
  removedEntity: EntityType | null,
  removal: 'DELETED' | 'MERGED' | null,
  removedPacket: number | null,
  mergedInto: string | null,
): CurrentRow | undefined {
  if (removal !== null && (latest === null || removedPacket! >= latest.packet)) {
    return { mbid, entity: removedEntity!, status: removal, packet: removedPacket!, mergedInto, latest };
  }
  if (latest === null) return undefined;
  return { mbid, entity: latest.entity, status: 'CURRENT', packet: latest.packet, mergedInto: null, latest };
}

/** CURRENT_OF over the relation `m`, prepared once per connection, reading arrays. */
function currentStatement(store: Store, m: string, data: boolean) {
  return cachedStatement(store, CURRENT_OF(m, data)).raw(true);
}

/** The current state of `mbid` (lower case): two index seeks plus its newest change; undefined when not held. */
export function currentOfMbid(store: Store, mbid: string): CurrentRow | undefined {
  const raw = currentStatement(store, '(SELECT ? AS mbid)', true).get(mbid) as RawCurrentRow;
  return currentRowOf(store, raw);
}

const MBID_LIST = '(SELECT value AS mbid FROM json_each(?))';

type RawNewest = [changeId: number | null, data: Buffer | null];
type RawRemoval = [
  mbid: string,
  entity: EntityType,
  kind: 'DELETED' | 'MERGED',
  packet: number,
  mergedInto: string,
];

/**
 * The current state of each of `mbids` (lower case), in the order given; undefined where not held.
 * Duplicates answer the same row. One snapshot: the newest lines of all in one statement, the
 * removals of the few the removal filter (db/removalFilter.ts) cannot rule out in a second.
 * `data: false` reads only the index and leaves each newest line's `data` to be read when first
 * used (`resolve`, which mostly needs statuses and MBIDs: about half the time of reading every line).
 */
export function currentOfMbids(
  store: Store,
  mbids: readonly string[],
  { data = true }: { data?: boolean } = {},
): (CurrentRow | undefined)[] {
  if (mbids.length === 0) return [];
  // Made unique here, not with DISTINCT in SQL: its temporary B-tree was half the statement's time
  // for 100 MBIDs (330 of 660 µs on the 100,000-entity bootstrap database).
  const unique = [...new Set(mbids)];
  const rows = readSnapshot(store, () => {
    const removals = removalsOf(store, unique);
    const newest = newestOf(store, unique, data);
    return unique.map((mbid, i) => currentRowWith(store, mbid, newest[i]!, removals.get(mbid)));
  });
  if (unique.length === mbids.length) return rows;
  const byMbid = new Map(unique.map((mbid, i) => [mbid, rows[i]]));
  return mbids.map((mbid) => byMbid.get(mbid));
}

/** The newest removal of each of `mbids` that the removal filter cannot rule out, by MBID. */
function removalsOf(store: Store, mbids: readonly string[]): Map<string, RawRemoval> {
  const filter = removalFilter(store);
  const maybeRemoved = mbids.filter((mbid) => filter.mayHave(mbid));
  const removals = new Map<string, RawRemoval>();
  if (maybeRemoved.length === 0) return removals;
  const statement = cachedStatement(store, REMOVAL_OF(MBID_LIST)).raw(true);
  for (const row of statement.all(JSON.stringify(maybeRemoved)) as RawRemoval[]) removals.set(row[0], row);
  return removals;
}

/** The newest line (id, and bytes with `data`) of each of `mbids` (unique), in their order. */
function newestOf(store: Store, mbids: readonly string[], data: boolean): RawNewest[] {
  const list = JSON.stringify(mbids);
  // json_each gives the array's elements in order, and the list is the outer loop of the statement.
  const rows = data
    ? (cachedStatement(store, NEWEST_OF(MBID_LIST, true)).raw(true).all(list) as RawNewest[])
    : (cachedStatement(store, NEWEST_OF(MBID_LIST, false)).pluck().all(list) as (number | null)[]).map(
        (changeId): RawNewest => [changeId, null],
      );
  if (rows.length !== mbids.length) throw new Error(`${rows.length} rows read for ${mbids.length} MBIDs`);
  return rows;
}

function currentRowWith(
  store: Store,
  mbid: string,
  [changeId, data]: RawNewest,
  removal: RawRemoval | undefined,
) {
  const latest = latestOf(store, mbid, changeId, data);
  if (removal === undefined) return currentRowFrom(mbid, latest, null, null, null, null);
  return currentRowFrom(mbid, latest, removal[1], removal[2], removal[3], removal[4]);
}

/** Every MBID a JSON dump line or a removal names, once each (both stores). */
export const HELD_MBIDS_SQL = 'SELECT mbid FROM changes UNION SELECT mbid FROM removals';

/**
 * Number of MBIDs held in the current state, per status. Reads every MBID of `changes` and
 * `removals` (seconds on millions of entities): for reports and tests, not for a request path.
 * PostgreSQL's twin: db/postgres/currentReads.ts `currentCountsPostgres`.
 */
export function currentCounts(store: Store): Record<CurrentStatus, number> {
  const counts: Record<CurrentStatus, number> = { CURRENT: 0, DELETED: 0, MERGED: 0 };
  const all = store.sqlite.prepare(CURRENT_OF(`(${HELD_MBIDS_SQL})`, false)).raw();
  for (const raw of all.iterate() as IterableIterator<RawCurrentRow>) {
    const row = currentRowOf(store, raw);
    if (row) counts[row.status]++;
  }
  return counts;
}

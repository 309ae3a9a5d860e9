import type Database from 'better-sqlite3';
import type { Store } from './client.js';
import { type PacketRow, packetByNumber } from './queries.js';

/**
 * The newest complete packet (`latestPacket`): the newest packet that is complete with every
 * packet from the first one stored up to it also present and complete (no gaps). The writer keeps
 * it as a mark (meta `latest_packet`, JSON `{"from": first packet, "number": latest or null}`) in
 * the transaction that completes or reopens a packet (sync/state.ts, bootstrap), so a read costs
 * three primary key lookups however old the database is. drizzle/sqlite/0007_read_cost.sql fills the mark
 * for databases made by earlier versions.
 */

/** The meta key of the mark. */
export const MARK_KEY = 'latest_packet';

/**
 * The statements of the mark with `?` parameters, written once for SQLite and PostgreSQL
 * (db/postgres/latestPacket.ts, sync/postgres/packetState.ts): each reads one value.
 */
export const LATEST_PACKET_SQL = {
  firstPacket: 'SELECT min(number) AS first FROM packets',
  /** (key) → value. */
  readMeta: 'SELECT value FROM meta WHERE key = ?',
  /** (key, value). */
  putMeta:
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  /** (packet) → true (1) when complete, false (0) when not, no row when unknown. */
  complete: 'SELECT synced_at IS NOT NULL AS complete FROM packets WHERE number = ?',
};

/** The stored mark: the first packet it was counted from, and the newest complete packet or null. */
export interface LatestMark {
  from: number;
  number: number | null;
}

/** Where the writer walks on from: the mark's number when it counts from `first`, else before `first`. */
export function walkStart(mark: LatestMark | undefined, first: number): number {
  return mark?.from === first ? (mark.number ?? first - 1) : first - 1;
}

/** The mark once `packet` became incomplete again; undefined when it does not move. */
export function loweredMark(mark: LatestMark | undefined, packet: number): LatestMark | undefined {
  if (!mark || mark.number === null || mark.number < packet) return undefined;
  return { from: mark.from, number: packet - 1 >= mark.from ? packet - 1 : null };
}

function firstPacket(sqlite: Database.Database): number | null {
  return sqlite.prepare(LATEST_PACKET_SQL.firstPacket).pluck().get() as number | null;
}

function readMark(sqlite: Database.Database): LatestMark | undefined {
  const value = sqlite.prepare(LATEST_PACKET_SQL.readMeta).pluck().get(MARK_KEY) as string | undefined;
  return value === undefined ? undefined : (JSON.parse(value) as LatestMark);
}

function writeMark(sqlite: Database.Database, mark: LatestMark): void {
  sqlite.prepare(LATEST_PACKET_SQL.putMeta).run(MARK_KEY, JSON.stringify(mark));
}

/**
 * From `start` (a packet known complete back to `first`, or `first - 1`), the last packet before
 * the first gap; null when `first` itself is incomplete. One primary key read per packet passed.
 */
function walk(sqlite: Database.Database, first: number, start: number): number | null {
  const complete = sqlite.prepare(LATEST_PACKET_SQL.complete).pluck();
  let number = start;
  while (complete.get(number + 1) === 1) number++;
  return number >= first ? number : null;
}

/**
 * Number of the newest complete packet (see the module comment), or undefined. Reads the mark; a
 * packet stored below the first one since the mark was written (a sync `--from` further back)
 * makes the mark's base stale, and then the packets are walked until the writer moves the mark.
 */
export function latestPacketNumber(store: Store): number | undefined {
  const first = firstPacket(store.sqlite);
  if (first === null) return undefined;
  const mark = readMark(store.sqlite);
  const number = mark?.from === first ? mark.number : walk(store.sqlite, first, first - 1);
  return number ?? undefined;
}

/** The newest complete packet's row (see {@link latestPacketNumber}), or undefined. */
export function latestPacket(store: Store): PacketRow | undefined {
  const number = latestPacketNumber(store);
  return number === undefined ? undefined : packetByNumber(store, number);
}

/**
 * Writer: moves the mark forward over the packets completed since it was written. Call in the
 * transaction that completes packets; costs one read per packet it passes (all of them once, when
 * a packet was stored below the first one).
 */
export function advanceLatestPacket(sqlite: Database.Database): void {
  const first = firstPacket(sqlite);
  if (first === null) return;
  writeMark(sqlite, { from: first, number: walk(sqlite, first, walkStart(readMark(sqlite), first)) });
}

/** Writer: `packet` became incomplete again, so the mark moves back before it when past it. */
export function lowerLatestPacket(sqlite: Database.Database, packet: number): void {
  const lowered = loweredMark(readMark(sqlite), packet);
  if (lowered) writeMark(sqlite, lowered);
}

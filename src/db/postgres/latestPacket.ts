import { LATEST_PACKET_SQL, type LatestMark, MARK_KEY } from '../latestPacket.js';
import { type PgQueryable, pgRow } from './sql.js';

/**
 * The latest-packet mark of db/latestPacket.ts read on PostgreSQL, with the same statements (written
 * once there) and the same rules. The writer (sync/postgres/packetState.ts) moves the mark with these
 * reads in the transaction that completes or reopens a packet; the readers ask {@link latestPacketNumberOn}.
 */

/** The lowest packet stored, or null when there is none. */
export async function firstPacket(on: PgQueryable): Promise<number | null> {
  return (await pgRow<{ first: number | null }>(on, LATEST_PACKET_SQL.firstPacket))?.first ?? null;
}

/** The stored mark (meta `latest_packet`), or undefined when it was never written. */
export async function readMark(on: PgQueryable): Promise<LatestMark | undefined> {
  const row = await pgRow<{ value: string }>(on, LATEST_PACKET_SQL.readMeta, [MARK_KEY]);
  return row === undefined ? undefined : (JSON.parse(row.value) as LatestMark);
}

/** From `start`, the last packet before the first gap; null when `first` itself is incomplete. */
export async function walk(on: PgQueryable, first: number, start: number): Promise<number | null> {
  let number = start;
  while ((await pgRow<{ complete: boolean }>(on, LATEST_PACKET_SQL.complete, [number + 1]))?.complete)
    number++;
  return number >= first ? number : null;
}

/**
 * The newest complete packet with no gap before it (db/latestPacket.ts latestPacketNumber), or
 * undefined, read on `on` (a snapshot's client reads it within the snapshot): the mark, or a walk
 * when a packet was stored below the mark's first packet.
 */
export async function latestPacketNumberOn(on: PgQueryable): Promise<number | undefined> {
  const first = await firstPacket(on);
  if (first === null) return undefined;
  const mark = await readMark(on);
  const number = mark?.from === first ? mark.number : await walk(on, first, first - 1);
  return number ?? undefined;
}

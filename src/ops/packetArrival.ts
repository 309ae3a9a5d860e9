import type { PacketRow } from '../db/queries.js';
import type { Reads } from '../db/reads.js';

/** How long {@link packetArrival} waits for reads to show an announced packet complete, in ms. */
export const ARRIVAL_WAIT_MS = 60_000;
/** First and longest pause between two reads of {@link packetArrival}, in ms. */
const FIRST_PAUSE_MS = 20;
const LONGEST_PAUSE_MS = 1_000;

/** Options of {@link packetArrival}; tests shorten the wait. */
export interface ArrivalOptions {
  /** Longest wait in ms; default {@link ARRIVAL_WAIT_MS}. */
  waitMs?: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Packet `packet`'s row as `reads` show it, once they show it complete (`syncedAt` set), waiting
 * for that at most `options.waitMs`. `packetSynced` is announced when the packet commits on the
 * database the sync writes (PostgreSQL: its LISTEN watch on the primary), while the reads of a
 * request may go to a streaming replica that replays the commit milliseconds to seconds later
 * (issue 17, `--db-replica`): read at once, a wake-up would find nothing new and its events would
 * wait for the next packet, an hour later. Over SQLite or the primary the first read shows it.
 * @returns the row as it stands when complete or when the wait ends (possibly incomplete), or
 *   undefined when `reads` do not hold the packet by then
 * @throws the store's error when a read fails
 */
export async function packetArrival(
  reads: Pick<Reads, 'packetByNumber'>,
  packet: number,
  options: ArrivalOptions = {},
): Promise<PacketRow | undefined> {
  const waitMs = options.waitMs ?? ARRIVAL_WAIT_MS;
  const started = Date.now();
  for (let wait = FIRST_PAUSE_MS; ; wait = Math.min(wait * 2, LONGEST_PAUSE_MS)) {
    const row = await reads.packetByNumber(packet);
    const left = waitMs - (Date.now() - started);
    if (row?.syncedAt || left <= 0) return row;
    await pause(Math.min(wait, left));
  }
}

import type { FeedPosition } from './feedPosition.js';
import { changeKey } from './keys.js';

/**
 * Rewrites of the change stream behind its readers (issue 15: "nothing twice, nothing skipped").
 * A sync only stores events after the stream's frontier (db/changeFeedQueries.ts), so a position
 * handed out stays valid. Three operator actions store events at or before a frontier already
 * served: `livefeed import` of an older packet's JSON dump, a sync `--from` below the first packet
 * held, and the packets a `bootstrap` leaves to fetch between its full dump and newer packets held.
 * The writer records each such write as a **rewrite**: the packet written, under a new **epoch**
 * (1, 2, ...), in meta `feed_rewrites`, in the write's own transaction. Every cursor carries the
 * epoch it was made in; a cursor of an older epoch at or after a packet rewritten since is refused
 * with {@link HistoryRewrittenError} (GraphQL `HISTORY_REWRITTEN`), never served with a silent gap.
 * To know what was served, the writer keeps the highest frontier readers could have seen (meta
 * `feed_served`): it notes the frontier before every write that may lower it (db/feedServed.ts).
 */

/** Meta key of the rewrites: JSON `[[epoch, packet], ...]`, epochs increasing. */
export const REWRITES_KEY = 'feed_rewrites';
/** Meta key of the highest frontier noted (JSON number). */
export const SERVED_KEY = 'feed_served';

/** One rewrite: events of `packet` were stored at or behind a served frontier, in epoch `epoch`. */
export interface FeedRewrite {
  epoch: number;
  packet: number;
}

/**
 * Rewrites kept at most. Older ones are merged into the next (the later epoch, the lower packet):
 * a cursor between them is then refused from the lower packet, once too often but never too late.
 */
const MAX_REWRITES = 1000;

// The last value parsed: every read of the stream parses the same value until the next rewrite.
let parsed: { text: string; rewrites: readonly FeedRewrite[] } | undefined;

/**
 * The rewrites of the stored meta value (null or absent: none), shared between calls: not to be
 * changed. @throws SyntaxError for a value not written by {@link rewritesText}
 */
export function parseRewrites(text: string | null | undefined): readonly FeedRewrite[] {
  if (text === null || text === undefined) return [];
  if (parsed?.text !== text) {
    const pairs = JSON.parse(text) as [number, number][];
    parsed = { text, rewrites: Object.freeze(pairs.map(([epoch, packet]) => ({ epoch, packet }))) };
  }
  return parsed.rewrites;
}

/** The meta value of `rewrites`. */
export function rewritesText(rewrites: readonly FeedRewrite[]): string {
  return JSON.stringify(rewrites.map((r) => [r.epoch, r.packet]));
}

/** The current epoch: that of the last rewrite, 0 before any. */
export function currentEpoch(rewrites: readonly FeedRewrite[]): number {
  return rewrites.at(-1)?.epoch ?? 0;
}

/** `rewrites` with a rewrite of `packet` in a new epoch (the oldest two merged past {@link MAX_REWRITES}). */
export function withRewrite(rewrites: readonly FeedRewrite[], packet: number): FeedRewrite[] {
  const next = [...rewrites, { epoch: currentEpoch(rewrites) + 1, packet }];
  if (next.length > MAX_REWRITES) {
    const [oldest, second] = next.splice(0, 2) as [FeedRewrite, FeedRewrite];
    next.unshift({ epoch: second.epoch, packet: Math.min(oldest.packet, second.packet) });
  }
  return next;
}

/**
 * `rewrites` with a rewrite of `packet` joined to the last one (its epoch, the lower packet): for a
 * write in the same transaction as the last rewrite, whose epoch no reader has seen yet.
 */
export function withJoinedRewrite(rewrites: readonly FeedRewrite[], packet: number): FeedRewrite[] {
  const last = rewrites.at(-1);
  if (!last) return withRewrite(rewrites, packet);
  return [...rewrites.slice(0, -1), { epoch: last.epoch, packet: Math.min(last.packet, packet) }];
}

/** The packet a position lies in (after the end of packet p: p). */
function packetOfPosition(position: FeedPosition): number {
  return position.at === 'change' ? changeKey(position.id).packet : position.packet;
}

/**
 * The lowest packet rewritten after epoch `epoch` at or before `position`: events may have been
 * stored before a position made in that epoch. Undefined when none was (the position still holds).
 */
export function rewrittenBefore(
  rewrites: readonly FeedRewrite[],
  epoch: number,
  position: FeedPosition,
): number | undefined {
  const at = packetOfPosition(position);
  let lowest: number | undefined;
  for (const rewrite of rewrites)
    if (rewrite.epoch > epoch && rewrite.packet <= at && (lowest === undefined || rewrite.packet < lowest))
      lowest = rewrite.packet;
  return lowest;
}

/**
 * The epoch in which the stream at or before `packet` was last stored again (0 when never): it
 * labels a webhook event's id, so that an event changes its id only when the stream up to it was
 * stored again, and a retry after a rewrite of later packets sends the same ids.
 */
export function rewriteEpochAt(rewrites: readonly FeedRewrite[], packet: number): number {
  let epoch = 0;
  for (const rewrite of rewrites)
    if (rewrite.packet <= packet && rewrite.epoch > epoch) epoch = rewrite.epoch;
  return epoch;
}

/**
 * Thrown when a position of an older epoch lies at or after a packet rewritten since: events may
 * now exist before it that its holder never saw.
 */
export class HistoryRewrittenError extends Error {
  /**
   * @param from the lowest packet rewritten since the position was made: read again from its start
   * @param epoch the current epoch, for the position to read again from
   */
  constructor(
    readonly from: number,
    readonly epoch: number,
  ) {
    super(
      `events of packet ${from} and later were stored after this position was made (livefeed import, ` +
        'a sync --from further back or a bootstrap): events may now precede it that were never ' +
        `served; read again from the start of packet ${from} (its events come again, in order)`,
    );
    this.name = 'HistoryRewrittenError';
  }

  /** Where to read again from: after the packet before {@link from}, in {@link epoch}. */
  get restart(): FeedPosition {
    return { at: 'packetEnd', packet: this.from - 1 };
  }
}

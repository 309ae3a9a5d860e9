import { currentEpoch, type FeedRewrite, rewrittenBefore } from '../db/feedRewrites.js';
import type { Logger } from '../logger.js';

/**
 * Warns the operator when a write stored events behind what the change stream had served (a
 * `sync --from` further back, a `livefeed import` of an older packet, a bootstrap's gap): the
 * rewrites recorded between `before` and `after` (db/feedRewrites.ts, read before and after the
 * write); `fromPacket` is the packet from which cursors made before are refused. Clients learn it from `HISTORY_REWRITTEN`; the operator who caused it learns it here, as
 * one `change-stream-rewritten` log line. Nothing when the epoch did not move.
 * @returns true when it warned (rewrites were recorded between the two reads)
 */
export function warnRewritten(
  logger: Logger,
  before: readonly FeedRewrite[],
  after: readonly FeedRewrite[],
): boolean {
  // What a cursor made before at the end of the stream is refused from: the lowest packet stored,
  // or lower when the oldest rewrites kept were merged (db/feedRewrites.ts), never higher.
  const end = { at: 'packetEnd', packet: Number.MAX_SAFE_INTEGER } as const;
  const from = rewrittenBefore(after, currentEpoch(before), end);
  if (from === undefined) return false;
  logger.warn(
    { event: 'change-stream-rewritten', fromPacket: from, epoch: currentEpoch(after) },
    'events were stored behind what the change stream had already served: changeFeed cursors made ' +
      `before, at or after packet ${from}, get HISTORY_REWRITTEN, and webhooks and entityChanged ` +
      'subscribers are sent the events from there again (README, "Older packets stored later")',
  );
  return true;
}

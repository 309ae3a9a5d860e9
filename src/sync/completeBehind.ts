import type { SyncContext, SyncReport } from './context.js';
import type { HourHeld } from './hourHeld.js';
import { settle } from './settle.js';

/** Whether a packet completes only with its replication packet stored (the sync follows them, and not skipped). */
export function requiresReplication(ctx: SyncContext): (packet: number) => boolean {
  return (packet) => ctx.policy.replicationPackets && !ctx.policy.skipPackets.has(packet);
}

/**
 * During a pass, once `packet` is stored: settles the dumps of the packets before it on the evidence
 * stored so far (a later packet's JSON dump; FEED.md, Errors; no probe upstream, the end of the pass
 * does that), completes every packet of the pass up to `packet` that now can be, and announces each
 * (`onPacketSynced`). Readers, the change stream and webhooks so see each packet of a long catch-up
 * as soon as it is complete, not when the pass ends; a pass stopped midway leaves them complete.
 * @returns the packets completed, also appended to `report.completed`
 */
export async function completeBehind(
  ctx: SyncContext,
  range: { from: number; to: number },
  packet: number,
  report: SyncReport,
  now: () => Date,
  hourHeld: HourHeld,
): Promise<number[]> {
  if (packet > range.from)
    await settle(ctx, { from: range.from, to: packet - 1 }, report, now, hourHeld, false);
  const completed = await ctx.store.completePackets(
    { from: range.from, to: packet },
    ctx.policy.entities,
    requiresReplication(ctx),
    now().toISOString(),
  );
  report.completed.push(...completed);
  for (const number of completed) ctx.observe.onPacketSynced?.(number);
  return completed;
}

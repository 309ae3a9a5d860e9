import type { SyncContext, SyncReport } from './context.js';
import { askDump } from './dumpStep.js';
import { probeLaterDumps } from './evidence.js';
import type { HourHeld } from './hourHeld.js';
import { settleDecision } from './state.js';

/**
 * Declares settled missing dumps NO_CHANGES (FEED.md, Errors: only a later packet's JSON dump is
 * evidence; `--settle-after` hours when the operator set them), asking once more where the last
 * 404 predates the evidence. Where the sync tracks only some entity types, first looks upstream for
 * that evidence among the others (sync/evidence.ts). A later dump settles only an hour upstream still
 * holds (sync/hourHeld.ts). With `probe` false, only a later dump already stored settles, not
 * `--settle-after`'s hours: a pass settles so after each packet it stores (sync/completeBehind.ts),
 * where evidence may still come in the same pass, and looks upstream and at the hours at its end.
 */
export async function settle(
  ctx: SyncContext,
  range: { from: number; to: number },
  report: SyncReport,
  now: () => Date,
  hourHeld: HourHeld,
  probe = true,
): Promise<void> {
  const tracked = async () =>
    (await ctx.store.pendingDumps(range.from, range.to)).filter((dump) =>
      ctx.policy.entities.includes(dump.entity),
    );
  let waiting = await tracked();
  // Read again only when a probe found evidence: it changes the dumps' `laterDumpSeenAt`.
  if (probe && report.latest !== null && (await probeLaterDumps(ctx, waiting, report.latest, now)))
    waiting = await tracked();
  for (const dump of waiting) {
    const { decision, by } = settleDecision(dump, probe ? ctx.policy.settleAfterMs : null, now());
    if (decision === 'wait') continue;
    // A later dump is no evidence for an hour upstream has deleted (hourHeld.ts).
    if (by === 'LATER_DUMP' && !(await hourHeld(dump))) continue;
    if (decision === 'recheck') {
      await askDump(ctx, report, dump.packet, dump.entity, now);
      // Still PENDING: the 404 just seen came after the evidence (or the hours), so it settles.
      if ((await ctx.store.dumpStatus(dump.packet, dump.entity)) !== 'PENDING') continue;
    }
    await ctx.store.markNoChanges(dump.packet, dump.entity, by, now().toISOString());
  }
}

/**
 * Asks again for every dump `--settle-after` declared NO_CHANGES once a later packet's JSON dump
 * has been seen: it is stored (SYNCED) if upstream published it late, or settled on that evidence.
 * Either way its packet, still complete, is announced again (reannounce). A failure reopens its packet in the transaction that records it FAILED (fileRecords.ts
 * recordFailure): the next passes ask for it again, and the change stream never passes it.
 */
export async function recheckTimeSettled(
  ctx: SyncContext,
  report: SyncReport,
  now: () => Date,
  hourHeld: HourHeld,
): Promise<void> {
  for (const dump of await ctx.store.timeSettledWithEvidence()) {
    if (!ctx.policy.entities.includes(dump.entity)) continue;
    ctx.signal?.throwIfAborted();
    // A later dump is no evidence for an hour upstream has deleted: it stays settled by time.
    if (!(await hourHeld(dump))) continue;
    ctx.observe.logger.info(
      { event: 'settle-recheck', packet: dump.packet, entity: dump.entity },
      `asking again for ${dump.entity} of packet ${dump.packet}: it was settled by --settle-after, and a later packet's JSON dump is now there`,
    );
    // A 404 settles it on the evidence in one statement: never PENDING on a complete packet.
    await askDump(ctx, report, dump.packet, dump.entity, now, 'LATER_DUMP');
    const status = await ctx.store.dumpStatus(dump.packet, dump.entity);
    // Stored or settled on evidence, it no longer holds the change stream: subscribers are woken.
    if (status !== 'FAILED') await reannounce(ctx, report, dump.packet, now);
  }
}

/**
 * Announces `packet` again when it is complete (SyncStore.restampComplete): what held the change
 * stream at it is resolved, and a live follower (`entityChanged`) is woken by `packetSynced`, not
 * left waiting for the next packet to complete.
 */
export async function reannounce(ctx: SyncContext, report: SyncReport, packet: number, now: () => Date) {
  if (await ctx.store.restampComplete(packet, now().toISOString())) report.reannounced.push(packet);
}

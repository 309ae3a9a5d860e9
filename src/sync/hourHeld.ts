import type { EntityType } from '../feed/entities.js';
import { FeedFatalError, safeMessage } from '../feed/errors.js';
import { replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext } from './context.js';
import { assertDeploymentNames, plainNameHoldsHour } from './deploymentCheck.js';

/** One pass's check of {@link hourHeldCheck}: true when the dump's hour may settle. */
export type HourHeld = (dump: { packet: number; entity: EntityType }) => Promise<boolean>;

/**
 * Whether upstream still holds the hour of a JSON dump that answered 404, asked before a later
 * packet's JSON dump settles it as having no changes. Upstream deletes old packets (FEED.md,
 * Deployments and URLs: "old ones may be gone", retention not published), and a deleted hour's JSON
 * dump answers 404 like an hour without changes: after an outage longer than upstream keeps
 * packets, the later packets' dumps would settle hours whose changes are lost. Every hour has a
 * replication packet, so while it answers 404 too the dump's 404 is no evidence of "no changes".
 *
 * - With replication packets (the default), the pass has asked for the hour's replication packet
 *   already: stored or FAILED (upstream has it), the hour is held; PENDING or MISSING (404), or not
 *   asked yet, it is not. A packet in `--skip-packets` is held: the operator skips only its
 *   replication packet.
 * - Without them (`--no-replication-packets`), it asks the feed for the replication packet, once
 *   per packet and pass, without reading its body: 200 is held, 404 is not, unless the other
 *   deployment's name answers (sync/deploymentCheck.ts: on production the plain name holds the
 *   hour; on `--deployment test` a `-v2` name stops the sync).
 *
 * A dump whose hour is not held stays PENDING with the reason as its `error` (one settled by
 * `--settle-after` stays settled by time), logged once per packet and pass; a request that fails
 * leaves it waiting too (logged), and a later pass asks again.
 * @throws FeedFatalError (the token refused, the other deployment's names); the abort reason when aborted.
 * @returns the pass's check (settle.ts `settle` and `recheckTimeSettled` share it: one answer per packet).
 */
export function hourHeldCheck(ctx: SyncContext, now: () => Date): HourHeld {
  const reasons = new Map<number, Promise<string | null>>();
  return async (dump) => {
    let reason = reasons.get(dump.packet);
    if (!reason) {
      reason = whyNotHeld(ctx, dump.packet);
      reasons.set(dump.packet, reason);
    }
    const why = await reason;
    if (why === null) return true;
    await ctx.store.explainPending(dump.packet, dump.entity, why, now().toISOString());
    return false;
  };
}

/** Null when upstream holds the hour of `packet`, else why it may not (logged). */
async function whyNotHeld(ctx: SyncContext, packet: number): Promise<string | null> {
  if (ctx.policy.skipPackets.has(packet)) return null;
  const name = replicationPacketName(packet, ctx.feed.deployment);
  const { logger } = ctx.observe;
  let answer: string;
  if (ctx.policy.replicationPackets) {
    const status = await ctx.store.replication.replicationStatus(packet);
    if (status === 'SYNCED' || status === 'FAILED') return null;
    answer = status === undefined ? 'was not asked for yet' : `answers 404 as well (${status})`;
  } else {
    try {
      if (await ctx.feed.client.exists(name, ctx.signal)) return null;
      // A later dump exists, so this is not the newest packet: its names tell the deployment. On
      // production the plain name (copied beside the -v2 file) holds the hour too.
      if (ctx.feed.deployment === 'test') await assertDeploymentNames(ctx, packet);
      else if (await plainNameHoldsHour(ctx, packet)) return null;
    } catch (error) {
      if (ctx.signal?.aborted || error instanceof FeedFatalError) throw error;
      const why = `cannot ask whether upstream still holds packet ${packet} (${name}): ${safeMessage(error)}; its JSON dumps wait`;
      logger.warn({ event: 'hour-held-failed', packet, err: safeMessage(error) }, why);
      return why;
    }
    answer = 'answers 404 as well';
  }
  const why =
    `upstream may no longer hold packet ${packet}: its replication packet ${answer}, so the 404s of ` +
    'its JSON dumps are not settled as no changes although later dumps exist. After an outage, start ' +
    `again from a full dump; if upstream lost only the replication packet, --skip-packets ${packet} ` +
    'lets them settle (README, How a sync works)';
  logger.warn({ event: 'hour-gone', packet, file: name }, why);
  return why;
}

import type { EntityType } from '../feed/entities.js';
import { FeedAuthError, safeMessage } from '../feed/errors.js';
import { replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext } from './context.js';

/**
 * Whether upstream still holds the hour of a PENDING dump, asked before a later packet's JSON dump
 * settles it as having no changes. Upstream deletes old packets (FEED.md, Deployments and URLs:
 * "old ones may be gone", retention not published), and a deleted hour's JSON dump answers 404 like
 * an hour without changes: after an outage longer than upstream keeps packets, the later packets'
 * dumps would settle hours whose changes are lost. Every hour has a replication packet, so its 404
 * while later dumps exist says the hour is gone; its 200 says the dump's 404 means "no changes".
 *
 * Asked only without replication packets (`--no-replication-packets`): with them, the hour's
 * replication packet is fetched in the same pass and a deleted one stays MISSING, which `status`
 * and `failures` report and which holds the change stream (README, How a sync works).
 * One request per packet and pass (the packet's body is not read); answers are kept for the pass.
 * A gone hour's PENDING dumps stay PENDING with the reason as their `error` (one settled by
 * `--settle-after` stays settled by time), logged once per packet; a
 * request that fails leaves them waiting too (logged), and a later pass asks again.
 * @throws FeedAuthError when the feed refuses the token; the abort reason when aborted.
 * @returns a check for one dump: true when its hour may settle.
 */
export function hourHeldCheck(
  ctx: SyncContext,
  now: () => Date,
): (dump: { packet: number; entity: EntityType }) => Promise<boolean> {
  const answers = new Map<number, Promise<boolean>>();
  return async (dump) => {
    if (ctx.policy.replicationPackets) return true;
    let answer = answers.get(dump.packet);
    if (!answer) {
      answer = askHeld(ctx, dump.packet);
      answers.set(dump.packet, answer);
    }
    if (await answer) return true;
    await ctx.store.explainPending(dump.packet, dump.entity, goneReason(dump.packet), now().toISOString());
    return false;
  };
}

function goneReason(packet: number): string {
  return (
    `upstream no longer holds packet ${packet}: its replication packet answers 404 while later packets' ` +
    'JSON dumps exist, so this 404 does not mean "no changes" and the hour is not settled; ' +
    'start again from a full dump (README, First import)'
  );
}

async function askHeld(ctx: SyncContext, packet: number): Promise<boolean> {
  const name = replicationPacketName(packet, ctx.feed.deployment);
  const { logger } = ctx.observe;
  try {
    if (await ctx.feed.client.exists(name, ctx.signal)) return true;
    logger.warn({ event: 'hour-gone', packet, file: name }, goneReason(packet));
  } catch (error) {
    if (ctx.signal?.aborted || error instanceof FeedAuthError) throw error;
    logger.warn(
      { event: 'hour-held-failed', packet, err: safeMessage(error) },
      `cannot ask whether upstream still holds packet ${packet} (${name}): ${safeMessage(error)}; its JSON dumps wait`,
    );
  }
  return false;
}

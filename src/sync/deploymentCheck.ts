import { FeedDeploymentError, FeedFatalError, safeMessage } from '../feed/errors.js';
import { deploymentOfFeedRoot, replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext } from './context.js';

/**
 * What a 404 of replication packet `packet` under `--deployment`'s name says, asked of the feed
 * (FEED.md, Deployments and URLs): production serves `replication-N-v2.tar.bz2` and, copied one
 * after the other, the plain `replication-N.tar.bz2`; the test deployment only the plain name.
 */

/**
 * `--deployment production` without replication packets: whether the plain name of `packet` is on
 * the feed, so upstream holds the hour although its `-v2` file answered 404. False when the
 * question fails (logged). (With replication packets, a sync stops there instead:
 * {@link assertDeploymentNames}.)
 * @throws FeedFatalError (the token refused) and the abort reason.
 */
export async function plainNameHoldsHour(ctx: SyncContext, packet: number): Promise<boolean> {
  return (await ask(ctx, replicationPacketName(packet, 'test'))) === true;
}

/**
 * For a packet older than the latest (the newest may be in the middle of its copy, one of its
 * names not there yet) whose `--deployment` name answered 404: when the feed has the other
 * deployment's name for it, the feed serves that deployment's names (a test feed root on another
 * host with production's default, production's root with `--deployment test`, or a copy that stopped
 * copying one of the names), and every packet would answer 404 and look deleted upstream. Upstream
 * moves a packet's two files one after the other (FEED.md, Errors), so only the latest may lack one.
 * @throws FeedDeploymentError then, which stops the sync; FeedFatalError (the token refused) and
 *   the abort reason. A question that fails is logged and changes nothing.
 */
export async function assertDeploymentNames(ctx: SyncContext, packet: number): Promise<void> {
  const { deployment } = ctx.feed;
  const other = deployment === 'test' ? 'production' : 'test';
  const found = replicationPacketName(packet, other);
  if (await ask(ctx, found))
    throw new FeedDeploymentError(deployment, replicationPacketName(packet, deployment), found, other);
}

/**
 * Whether a 404 under `--deployment`'s names is worth {@link assertDeploymentNames}: always with
 * `--deployment test`; with production, only off upstream's production host (a mirror or a proxy of
 * the test deployment), since upstream itself serves both names and one lost `-v2` copy there is
 * no misconfiguration (that packet stays MISSING, and `--skip-packets` is the way on).
 */
export function checksDeploymentNames(ctx: SyncContext): boolean {
  return ctx.feed.deployment === 'test' || deploymentOfFeedRoot(ctx.feed.client.feedRoot) !== 'production';
}

/** Whether `name` is on the feed; undefined when the question failed (logged). */
async function ask(ctx: SyncContext, name: string): Promise<boolean | undefined> {
  try {
    return await ctx.feed.client.exists(name, ctx.signal);
  } catch (error) {
    if (error instanceof FeedFatalError || ctx.signal?.aborted) throw error;
    ctx.observe.logger.warn(
      { event: 'deployment-check-failed', file: name, err: safeMessage(error) },
      `cannot ask whether the feed has ${name}: ${safeMessage(error)}`,
    );
    return undefined;
  }
}

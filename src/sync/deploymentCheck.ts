import { FeedDeploymentError, FeedFatalError, safeMessage } from '../feed/errors.js';
import { replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext } from './context.js';

/**
 * What a 404 of replication packet `packet` says about `--deployment`, asked of the feed (FEED.md,
 * Deployments and URLs: production serves `replication-N-v2.tar.bz2` and, copied one after the
 * other, the plain `replication-N.tar.bz2`; the test deployment only the plain name).
 * - `--deployment test` and the `-v2` name is there: the feed root is production's, and every
 *   packet would wait forever; throws {@link FeedDeploymentError}, which stops the sync.
 * - `--deployment production` and the plain name is there: upstream holds the hour, its `-v2`
 *   file may just not be copied yet; returns true.
 * Otherwise, or when the question fails (logged), false.
 * @throws FeedDeploymentError; FeedFatalError (the token refused) and the abort reason.
 */
export async function otherNameThere(ctx: SyncContext, packet: number): Promise<boolean> {
  const { deployment, client } = ctx.feed;
  const other = deployment === 'test' ? 'production' : 'test';
  const found = replicationPacketName(packet, other);
  let there: boolean;
  try {
    there = await client.exists(found, ctx.signal);
  } catch (error) {
    if (error instanceof FeedFatalError || ctx.signal?.aborted) throw error;
    ctx.observe.logger.warn(
      { event: 'deployment-check-failed', packet, file: found, err: safeMessage(error) },
      `cannot ask whether the feed has ${found}: ${safeMessage(error)}`,
    );
    return false;
  }
  if (there && deployment === 'test')
    throw new FeedDeploymentError(deployment, replicationPacketName(packet, deployment), found, other);
  return there;
}

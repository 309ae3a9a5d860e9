import type { Awaitable } from './awaitable.js';
import type { FeedPage, FeedQuery } from './changeFeedQueries.js';
import type { EpochPosition } from './feedPosition.js';
import { HistoryRewrittenError } from './feedRewrites.js';

/** Reads tried at most when rewrites keep committing between them. */
const ATTEMPTS = 5;

/**
 * A page of `query` for a follower that must not miss an event (webhooks, `entityChanged`): when
 * older packets were stored behind `query.after` since its epoch (db/feedRewrites.ts), the page
 * from the start of the lowest such packet instead, whose events then come again, in order; a
 * follower applying them ends with the current state. Read again when another rewrite commits
 * between the two reads.
 * @returns the page; when it was rewound, `rewoundTo` (the packet it starts again at) and `restart`
 *   (the position and epoch it was read from)
 * @throws HistoryRewrittenError after {@link ATTEMPTS} reads that each met a newer rewrite; what
 *   `read` throws otherwise (HistoryPrunedError when the packet to start again at was pruned)
 */
export async function readFollowing(
  read: (query: FeedQuery) => Awaitable<FeedPage>,
  query: FeedQuery,
): Promise<{ page: FeedPage; rewoundTo?: number; restart?: EpochPosition }> {
  let current = query;
  let rewoundTo: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const page = await read(current);
      if (rewoundTo === undefined) return { page };
      return { page, rewoundTo, restart: { position: current.after!, epoch: current.epoch ?? 0 } };
    } catch (error) {
      if (!(error instanceof HistoryRewrittenError) || attempt === ATTEMPTS) throw error;
      // A later refusal's packet lies before the position tried, so before every earlier one.
      rewoundTo = error.from;
      current = { ...current, after: error.restart, epoch: error.epoch };
    }
  }
}

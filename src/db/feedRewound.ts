import type { Awaitable } from './awaitable.js';
import type { FeedPage, FeedQuery } from './changeFeedQueries.js';
import { HistoryRewrittenError } from './feedRewrites.js';

/** Reads tried at most when rewrites keep committing between them. */
const ATTEMPTS = 5;

/**
 * A page of `query` for a follower that must not miss an event (webhooks, `entityChanged`): when
 * older packets were stored behind `query.after` since its epoch (db/feedRewrites.ts), the page
 * from the start of the lowest such packet instead, whose events then come again, in order; a
 * follower applying them ends with the current state. Read again when another rewrite commits
 * between the two reads.
 * @returns the page, and `rewoundTo` (the packet it starts again at) when it was rewound
 * @throws HistoryRewrittenError after {@link ATTEMPTS} reads that each met a newer rewrite; what
 *   `read` throws otherwise (HistoryPrunedError when the packet to start again at was pruned)
 */
export async function readFollowing(
  read: (query: FeedQuery) => Awaitable<FeedPage>,
  query: FeedQuery,
): Promise<{ page: FeedPage; rewoundTo?: number }> {
  let current = query;
  let rewoundTo: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const page = await read(current);
      return rewoundTo === undefined ? { page } : { page, rewoundTo };
    } catch (error) {
      if (!(error instanceof HistoryRewrittenError) || attempt === ATTEMPTS) throw error;
      // A later refusal's packet lies before the position tried, so before every earlier one.
      rewoundTo = error.from;
      current = { ...current, after: error.restart, epoch: error.epoch };
    }
  }
}

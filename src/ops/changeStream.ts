import type { FeedEvent, FeedQuery } from '../db/changeFeedQueries.js';
import type { FeedPosition } from '../db/feedPosition.js';
import type { FeedReads } from '../db/feedReads.js';
import { readFollowing } from '../db/feedRewound.js';
import { currentEpoch } from '../db/feedRewrites.js';
import type { Reads } from '../db/reads.js';
import type { PacketEvents } from './events.js';
import { type ArrivalOptions, packetArrival } from './packetArrival.js';

/** Events one read of {@link followChangeStream} takes from the database at most. */
const READ_SIZE = 500;

/**
 * The change stream from now on, live: every event of a packet that reaches the stream after the
 * call, in stream order, with the filters of `query` (the same events `changeFeed` serves), read
 * through `reads` (either store, db/feedReads.ts). Woken by `packetSynced` (published by the sync
 * in `livefeed start`, or by the database watch of `livefeed serve`: SQLite's polling,
 * PostgreSQL's LISTEN); each wake-up reads from the last position delivered up to the stream's
 * frontier, so a packet held back (the frontier waits for it) is delivered with a later wake-up.
 * When an operator stores older packets again behind the position (db/feedRewrites.ts), the
 * events from the lowest such packet on are delivered again, in order.
 * A wake-up first waits for `reads` to show its packet complete ({@link packetArrival}: a read
 * replica replays the commit after the primary announced it).
 * Ends when the consumer stops iterating (the subscription's client goes away).
 * @throws HistoryPrunedError when pruning overtook the position (the consumer fell that far behind);
 *   the store's error when a read fails
 */
export async function* followChangeStream(
  reads: Pick<FeedReads, 'feedHead' | 'readFeedEvents'> & Pick<Reads, 'packetByNumber'>,
  events: PacketEvents,
  query: Omit<FeedQuery, 'after' | 'first'>,
  arrival: ArrivalOptions = {},
): AsyncGenerator<FeedEvent> {
  // Subscribe before reading the start: a packet completing in between is then read at the next wake-up.
  const wakeUps = events.subscribe('packetSynced');
  const head = await reads.feedHead();
  let position: FeedPosition | undefined =
    head.frontier === undefined ? undefined : { at: 'packetEnd', packet: head.frontier };
  let epoch = head.epoch;
  for await (const packet of wakeUps) {
    await packetArrival(reads, packet, arrival);
    for (;;) {
      const pageQuery = { ...query, after: position, epoch, first: READ_SIZE };
      const { page } = await readFollowing((q) => reads.readFeedEvents(q), pageQuery);
      yield* page.events;
      position = page.next ?? position;
      epoch = currentEpoch(page.rewrites);
      if (!page.hasMore) break;
    }
  }
}

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FeedEvent, readFeedEvents } from '../../src/db/changeFeedQueries.js';
import { openStore, type Store } from '../../src/db/client.js';
import { feedEventJson, feedEventsJson } from '../../src/db/feedEventJson.js';
import { feedPositionText, parseFeedPosition } from '../../src/db/feedPosition.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { gql, tempDir, testApp } from '../support/harness.js';
import { syncVerified } from '../support/synced.js';

describe('readFeedEvents and the plain JSON form of events (for consumers outside GraphQL)', () => {
  let feed: SampleFeed;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  let app: ReturnType<typeof testApp>;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    dir = await tempDir('lf-feeddb-');
    await syncVerified(feed.feedRoot, dir.dir, { replicationPackets: true });
    store = openStore(join(dir.dir, 'livefeed.db'));
    app = testApp(join(dir.dir, 'livefeed.db'), dir.dir);
  }, 120_000);
  afterAll(async () => {
    store?.close();
    app?.store.close();
    await feed?.close();
    await dir?.cleanup();
  });

  it('positions written as text read back and continue the stream where it stopped', () => {
    const whole = readFeedEvents(store, { first: 500 });
    const events: FeedEvent[] = [];
    let after = undefined as ReturnType<typeof parseFeedPosition>;
    for (;;) {
      const page = readFeedEvents(store, { after, first: 3 });
      events.push(...page.events);
      after = parseFeedPosition(feedPositionText(page.next!));
      expect(after).toEqual(page.next);
      if (!page.hasMore) break;
    }
    expect(events).toEqual(whole.events);
    expect(readFeedEvents(store, { after, first: 500 }).events).toEqual([]);
    expect(parseFeedPosition('c12x')).toBeUndefined();
    expect(parseFeedPosition('r1/not-an-mbid/DELETED')).toBeUndefined();
  });

  it('a page read without its lines has the same events, each line read when asked for', () => {
    const eager = readFeedEvents(store, { first: 500 });
    const lazy = readFeedEvents(store, { first: 500, lines: false });
    expect(lazy.next).toEqual(eager.next);
    expect(lazy.events.length).toBe(eager.events.length);
    expect(lazy.events.some((e) => 'data' in e)).toBe(true);
    lazy.events.forEach((event, i) => {
      // Same fields and values; a lazy change's line is read on first use.
      expect(JSON.parse(feedEventJson(event))).toEqual(JSON.parse(feedEventJson(eager.events[i]!)));
    });
  });

  it('feedEventJson has the GraphQL field names and values, data as stored', async () => {
    const { events } = readFeedEvents(store, { first: 500 });
    const answer = await gql(
      app,
      `{ changeFeed(first: 500) { nodes {
        __typename
        ... on EntityChange { mbid type packet position timestamp name data }
        ... on EntityRemoval { mbid type packet kind mergedInto timestamp }
      } } }`,
    );
    expect(answer.errors).toBeUndefined();
    const nodes = answer.data!.changeFeed.nodes as Record<string, unknown>[];
    expect(events.map((e) => JSON.parse(feedEventJson(e)))).toEqual(nodes);
    expect(JSON.parse(feedEventsJson(events))).toEqual(nodes);
    expect(nodes.map((n) => n.__typename)).toContain('EntityRemoval');
    const change = events.find((e) => !('kind' in e))!;
    expect(feedEventJson(change)).toContain(`"data":${(change as { data: Buffer }).data.toString('utf8')}}`);
  });
});

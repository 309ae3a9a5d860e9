import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FeedEvent, type FeedPage, positionOfEvent } from '../../src/db/changeFeedQueries.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { deliverWebhook, type WebhookEndpoint } from '../../src/webhooks/deliver.js';
import { changeStreamSource, type WebhookEventSource } from '../../src/webhooks/source.js';
import { GrowingFeed } from '../support/growingFeed.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';

// A cursor that ends on a removal: the stream goes on with the next packet, not with the changes of
// the removal's packet again (they come before it). Bundled packets 186118 and 186122 each hold a
// JSON dump change and a removal; 186119 follows the first, the second ends the stream. Read one
// event at a time, pages end on those removals.

const FROM = 186116;
/** The stream's frontier: the feed's last packet, 186123, is not settled yet. */
const TO = 186122;
const expected = new GrowingFeed('/nonexistent').expectedEvents(FROM, TO);
const label = (e: FeedEvent) => `${e.packet} ${'kind' in e ? e.kind : 'change'} ${e.mbid}`;

describeStores('a change stream position after a removal', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let ctx: SyncContext;
  let receiver: Receiver;

  let hook: WebhookEndpoint;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    receiver = await startReceiver();
    hook = {
      name: 'ones',
      url: receiver.url,
      displayUrl: receiver.url,
      secret: 'receiver-shared-secret-0123456789',
      entities: null,
      mbids: null,
      batchSize: 1,
    };
    // Registered in an empty database: it starts from the beginning of the history.
    await db.webhooks.register([hook], new Date().toISOString());
    ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      replicationPackets: true,
    });
    expect((await syncOnce(ctx, { from: FROM })).problems).toEqual([]);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await ctx?.feed.client.close();
    await feed?.close();
    await receiver?.close();
    await data?.cleanup();
  });

  it('the fixture: packets with a change and a removal, one followed by another packet, one last', async () => {
    const kinds = (packet: number) =>
      expected.filter((e) => e.startsWith(`${packet} `)).map((e) => e.split(' ')[1] === 'change');
    expect(kinds(186118)).toEqual([true, false]);
    expect(kinds(186122)).toEqual([true, false]);
    const whole = await db.reads.readFeedEvents({ first: 500 });
    expect(whole.events.map(label)).toEqual(expected);
    expect(whole.next).toEqual({ at: 'packetEnd', packet: TO });
  });

  it('pages of one event read every event once, in stream order, with the count of what is left', async () => {
    const events: FeedEvent[] = [];
    let after: FeedPage['next'];
    for (let reads = 0; reads <= expected.length + 1; reads++) {
      expect(await db.reads.countFeedEvents({ after }), `left after ${events.length}`).toBe(
        expected.length - events.length,
      );
      const page = await db.reads.readFeedEvents({ after, first: 1 });
      events.push(...page.events);
      after = page.next;
      if (!page.hasMore) break;
    }
    expect(events.map(label)).toEqual(expected);
    expect(after).toEqual({ at: 'packetEnd', packet: TO });
  });

  it('after a removal come the next packet’s events, and only those are counted', async () => {
    const whole = await db.reads.readFeedEvents({ first: 500 });
    const at = whole.events.findIndex((e) => e.packet === 186118 && 'kind' in e);
    const after = positionOfEvent(whole.events[at]!);
    expect(after.at).toBe('removal');
    const page = await db.reads.readFeedEvents({ after, first: 2 });
    expect(page.events.map(label)).toEqual(expected.slice(at + 1, at + 3));
    expect(page.next).toEqual(positionOfEvent(page.events[1]!));
    expect(await db.reads.countFeedEvents({ after })).toBe(expected.length - at - 1);
    const last = positionOfEvent(whole.events.at(-1)!);
    expect(last.at).toBe('removal');
    expect(await db.reads.readFeedEvents({ after: last, first: 1 })).toEqual({
      events: [],
      next: { at: 'packetEnd', packet: TO },
      hasMore: false,
      rewrites: [],
    });
    expect(await db.reads.countFeedEvents({ after: last })).toBe(0);
  });

  it('a webhook with batches of one gets every event once, in order, and catches up', async () => {
    let reads = 0;
    const bounded: WebhookEventSource = (store, query) => {
      if (++reads > expected.length + 2) throw new Error(`read ${reads} times: delivery loops`);
      return changeStreamSource(store, query);
    };
    const run = await deliverWebhook(
      { store: db.webhooks, source: bounded, logger: testLogger(), userAgent: 'livefeed/test' },
      hook,
    );
    expect(run).toMatchObject({ outcome: 'caught-up', delivered: expected.length });
    const bodies = receiver.accepted();
    expect(bodies.map((b) => b.edges.map((e) => `${e.node.packet} ${e.node.mbid}`))).toEqual(
      expected.map((e) => [e.replace(/ \S+ /, ' ')]),
    );
    expect((await db.webhooks.states()).find((w) => w.name === hook.name)?.cursor).toBe(`p${TO}`);
  });
});

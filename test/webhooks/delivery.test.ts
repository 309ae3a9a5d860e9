import { afterAll, beforeAll, expect, it } from 'vitest';
import { positionOfEvent } from '../../src/db/changeFeedQueries.js';
import { feedPositionText } from '../../src/db/feedPosition.js';
import type { WebhookStore } from '../../src/db/webhookStore.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { deliverWebhook, type WebhookEndpoint } from '../../src/webhooks/deliver.js';
import { changeStreamSource } from '../../src/webhooks/source.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { type Receiver, startReceiver, verifySignature } from '../support/webhookReceiver.js';

const SECRET = 'receiver-shared-secret-0123456789';

/** Every event id of the stream (optionally filtered), read directly, in order. */
async function streamIds(
  store: WebhookStore,
  filter: { entities?: string[]; mbids?: string[] } = {},
): Promise<string[]> {
  const page = await store.readFeedEvents({ first: 1_000_000, ...(filter as object) });
  return page.events.map((e) => feedPositionText(positionOfEvent(e)));
}

function endpoint(receiver: Receiver, overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    name: 'hook',
    url: receiver.url,
    displayUrl: receiver.url,
    secret: SECRET,
    entities: null,
    mbids: null,
    batchSize: 5,
    ...overrides,
  };
}

describeStores('webhook delivery over the change stream (real receiver, real database)', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let ctx: SyncContext;
  let receiver: Receiver;
  const state = async (name: string) => (await db.webhooks.states()).find((w) => w.name === name);
  const deliveryCtx = () => ({
    store: db.webhooks,
    source: changeStreamSource,
    logger: testLogger(),
    userAgent: 'livefeed/test',
  });

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      replicationPackets: true,
    });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await db?.close();
    await ctx?.feed.client.close();
    await feed.close();
    await receiver.close();
    await data.cleanup();
  });

  it('sends every event in stream order, batched and signed; a down receiver loses nothing and gets nothing twice', async () => {
    const hook = endpoint(receiver);
    await db.webhooks.register([hook], new Date().toISOString());
    expect((await state('hook'))?.cursor).toBeNull(); // empty database: from the start
    await syncOnce(ctx, { to: 186105 });
    const first = await deliverWebhook(deliveryCtx(), hook);
    const upTo105 = await streamIds(db.webhooks);
    expect(upTo105.length).toBeGreaterThan(10);
    expect(first).toMatchObject({ outcome: 'caught-up', delivered: upTo105.length });

    for (const post of receiver.posts) {
      expect(verifySignature(SECRET, post.body, post.headers['x-livefeed-signature'] as string)).toBe(true);
      expect(
        verifySignature(
          'another-secret-0123456789',
          post.body,
          post.headers['x-livefeed-signature'] as string,
        ),
      ).toBe(false);
      expect(post.headers['content-type']).toBe('application/json');
      expect(post.headers['x-livefeed-delivery']).toMatch(/^[0-9a-f]{32}$/);
      expect(post.body).not.toContain(SECRET);
    }
    const bodies = receiver.accepted();
    expect(bodies.every((b) => b.edges.length >= 1 && b.edges.length <= 5)).toBe(true);
    expect(bodies.slice(0, -1).every((b) => b.edges.length === 5 && b.pageInfo.hasNextPage)).toBe(true);
    expect(bodies.at(-1)!.pageInfo.hasNextPage).toBe(false);
    expect(bodies[0]!.webhook).toBe('hook');
    const node = bodies[0]!.edges[0]!.node;
    expect(node.__typename).toBe('EntityChange');
    expect(node).toMatchObject({ packet: expect.any(Number), type: expect.stringMatching(/^[A-Z_]+$/) });
    expect(typeof node.data).toBe('object');

    // Down: a 503, then connection refused; each attempt stored, nothing acknowledged.
    await syncOnce(ctx, { to: 186110 });
    receiver.status = 503;
    const refused = await deliverWebhook(deliveryCtx(), hook);
    expect(refused).toMatchObject({ outcome: 'failed', delivered: 0, error: 'HTTP 503: receiver says no' });
    await receiver.down();
    // The first try may meet the pooled connection the receiver closed; the next one is refused.
    expect((await deliverWebhook(deliveryCtx(), hook)).error).toMatch(/ECONNREFUSED|UND_ERR_SOCKET/);
    const closed = await deliverWebhook(deliveryCtx(), hook);
    expect(closed.error).toBe('connection refused (ECONNREFUSED)');
    const failing = (await state('hook'))!;
    expect(failing).toMatchObject({
      attempts: 3,
      lastError: 'connection refused (ECONNREFUSED)',
      failedDeliveries: 3,
    });
    expect(Date.parse(failing.nextRetryAt!)).toBeGreaterThan(Date.parse(failing.lastErrorAt!));

    // Up again: everything from where it stopped, once, in order.
    await receiver.reopen();
    receiver.status = 200;
    const resumed = await deliverWebhook(deliveryCtx(), hook);
    const all = await streamIds(db.webhooks);
    expect(resumed.delivered).toBe(all.length - upTo105.length);
    const received = receiver.accepted().flatMap((b) => b.edges.map((e) => e.id));
    expect(received).toEqual(all);
    expect(await state('hook')).toMatchObject({
      attempts: 0,
      nextRetryAt: null,
      deliveredEvents: all.length,
      lastError: 'connection refused (ECONNREFUSED)',
    });
    // Nothing new: no POST.
    const posts = receiver.posts.length;
    expect(await deliverWebhook(deliveryCtx(), hook)).toMatchObject({ outcome: 'caught-up', delivered: 0 });
    expect(receiver.posts.length).toBe(posts);
  });

  it('honours the entity type and MBID filters', async () => {
    const other = await startReceiver();
    try {
      const artists = endpoint(other, { name: 'artists', entities: ['artist'], batchSize: 500 });
      const mbid = (await db.webhooks.readFeedEvents({ first: 1, entities: ['label'] })).events[0]!.mbid;
      const one = endpoint(other, { name: 'one', mbids: [mbid] });
      // Added with packets held: they start after the newest packet the stream serves.
      await db.webhooks.register([artists, one], new Date().toISOString());
      await deliverWebhook(deliveryCtx(), artists);
      await deliverWebhook(deliveryCtx(), one);
      expect(other.posts).toEqual([]);
      const before = (await streamIds(db.webhooks)).length;
      await syncOnce(ctx, {});
      const artistIds = await streamIds(db.webhooks, { entities: ['artist'] });
      await deliverWebhook(deliveryCtx(), artists);
      const got = other.accepted();
      const newArtists = got.flatMap((b) => b.edges);
      expect(newArtists.length).toBeGreaterThan(0);
      expect(newArtists.every((e) => e.node.type === 'ARTIST')).toBe(true);
      expect(newArtists.map((e) => e.id)).toEqual(artistIds.slice(artistIds.length - newArtists.length));
      expect((await streamIds(db.webhooks)).length).toBeGreaterThan(before);
      await deliverWebhook(deliveryCtx(), one);
      const forOne = other
        .accepted()
        .slice(got.length)
        .flatMap((b) => b.edges);
      expect(forOne.every((e) => e.node.mbid === mbid)).toBe(true);
    } finally {
      await other.close();
    }
  });
});

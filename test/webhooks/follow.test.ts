import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { positionOfEvent } from '../../src/db/changeFeedQueries.js';
import { feedPositionText } from '../../src/db/feedPosition.js';
import type { WebhookState } from '../../src/db/webhookQueries.js';
import type { WebhookStore } from '../../src/db/webhookStore.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { startWebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { changeStreamSource } from '../../src/webhooks/source.js';
import { syncWebhooks } from '../../src/webhooks/wiring.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';

const SECRET = 'follow-mode-secret-0123456789';

async function until(test: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await test()) return;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

async function streamIds(store: WebhookStore): Promise<string[]> {
  const page = await store.readFeedEvents({ first: 1_000_000 });
  return page.events.map((e) => feedPositionText(positionOfEvent(e)));
}

describeStores('webhooks while the sync follows', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let ctx: SyncContext;
  const state = async (name: string): Promise<WebhookState | undefined> =>
    (await db.webhooks.states()).find((w) => w.name === name);
  let receiver: Receiver;
  const controller = new AbortController();

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
    controller.abort();
    await db?.close();
    await ctx?.feed.client.close();
    await feed.close();
    await receiver.close();
    await data.cleanup();
  });

  it('delivers in the background after the packets a pass completes, between its transactions', async () => {
    const hook = {
      name: 'follow',
      url: receiver.url,
      displayUrl: receiver.url,
      secret: SECRET,
      entities: null,
      mbids: null,
      batchSize: 3,
    };
    const webhooks = await syncWebhooks({
      store: db.webhooks,
      endpoints: [hook],
      logger: testLogger(),
      signal: controller.signal,
      userAgent: 'livefeed/test',
    });
    webhooks.follow();
    await syncOnce(webhooks.watch(ctx), { to: 186108 });
    const expected = await streamIds(db.webhooks);
    expect(expected.length).toBeGreaterThan(3);
    await until(
      () => receiver.accepted().flatMap((b) => b.edges).length >= expected.length,
      'the deliveries',
    );
    await webhooks.stop();
    expect(receiver.accepted().flatMap((b) => b.edges.map((e) => e.id))).toEqual(expected);
  });

  it('retries a failing receiver at its stored next retry time, then delivers what waited', async () => {
    const hook = {
      name: 'retry',
      url: receiver.url,
      displayUrl: receiver.url,
      secret: SECRET,
      entities: null,
      mbids: null,
      batchSize: 500,
    };
    await db.webhooks.register([hook], new Date().toISOString()); // starts after packet 186108's events
    receiver.status = 503;
    const seen = receiver.posts.length;
    const dispatcher = startWebhookDispatcher(
      {
        store: db.webhooks,
        source: changeStreamSource,
        logger: testLogger(),
        userAgent: 'livefeed/test',
        signal: controller.signal,
        idle: () => db.webhooks.idle(controller.signal),
        retryScheduleMs: [200, 400],
      },
      [hook],
    );
    const before = (await streamIds(db.webhooks)).length;
    await syncOnce(ctx, { to: 186112 });
    dispatcher.kick();
    await until(async () => ((await state('retry'))?.attempts ?? 0) >= 2, 'two failed attempts');
    expect(await state('retry')).toMatchObject({
      lastError: 'HTTP 503: receiver says no',
      deliveredEvents: 0,
    });
    receiver.status = 200;
    const all = await streamIds(db.webhooks);
    await until(async () => (await state('retry'))?.attempts === 0, 'the retry that succeeds');
    await dispatcher.stop();
    const accepted = receiver.posts.slice(seen).filter((p) => p.status === 200);
    const ids = accepted.flatMap((p) =>
      (JSON.parse(p.body) as { edges: { id: string }[] }).edges.map((e) => e.id),
    );
    expect(ids).toEqual(all.slice(before));
    expect(await state('retry')).toMatchObject({
      deliveredEvents: all.length - before,
      nextRetryAt: null,
    });
  });

  it('a new following run delivers at once what an earlier run left with a retry time far ahead', async () => {
    const hook = {
      name: 'restarted',
      url: receiver.url,
      displayUrl: receiver.url,
      secret: SECRET,
      entities: null,
      mbids: null,
      batchSize: 500,
    };
    await db.webhooks.register([hook], new Date().toISOString());
    const dispatcherOf = () =>
      startWebhookDispatcher(
        {
          store: db.webhooks,
          source: changeStreamSource,
          logger: testLogger(),
          userAgent: 'livefeed/test',
          signal: controller.signal,
          idle: () => db.webhooks.idle(controller.signal),
          retryScheduleMs: [3_600_000],
        },
        [hook],
      );
    receiver.status = 503;
    const earlier = dispatcherOf();
    await syncOnce(ctx, { to: 186114 });
    earlier.kick();
    await until(async () => ((await state('restarted'))?.attempts ?? 0) >= 1, 'a failed attempt');
    await earlier.stop();
    const waiting = await state('restarted');
    expect(Date.parse(waiting!.nextRetryAt!)).toBeGreaterThan(Date.now() + 3_000_000);
    // The receiver is back and the sync starts again: its first run does not wait for that hour.
    receiver.status = 200;
    const restarted = dispatcherOf();
    restarted.kick();
    await until(async () => (await state('restarted'))?.attempts === 0, 'delivery by the new run');
    await restarted.stop();
    const delivered = await state('restarted');
    expect(delivered).toMatchObject({ nextRetryAt: null, attempts: 0 });
    expect(delivered!.deliveredEvents).toBeGreaterThan(0);
  });
});

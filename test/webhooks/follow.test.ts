import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { positionOfEvent, readFeedEvents } from '../../src/db/changeFeedQueries.js';
import type { Store } from '../../src/db/client.js';
import { feedPositionText } from '../../src/db/feedPosition.js';
import { registerWebhooks, webhookState } from '../../src/db/webhookQueries.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { outsideTransaction } from '../../src/webhooks/deliver.js';
import { startWebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { changeStreamSource } from '../../src/webhooks/source.js';
import { syncWebhooks } from '../../src/webhooks/wiring.js';
import { syncContext, tempDir, testLogger } from '../support/harness.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';

const SECRET = 'follow-mode-secret-0123456789';

async function until(test: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (test()) return;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

function streamIds(store: Store): string[] {
  return readFeedEvents(store, { first: 1_000_000 }).events.map((e) => feedPositionText(positionOfEvent(e)));
}

describe('webhooks while the sync follows', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let ctx: SyncContext & { store: Store };
  let receiver: Receiver;
  const controller = new AbortController();

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir, replicationPackets: true });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    controller.abort();
    ctx.store.close();
    await ctx.feed.client.close();
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
    const webhooks = syncWebhooks({
      store: ctx.store,
      endpoints: [hook],
      logger: testLogger(),
      signal: controller.signal,
      userAgent: 'livefeed/test',
    });
    webhooks.follow();
    await syncOnce(webhooks.watch(ctx), { to: 186108 });
    const expected = streamIds(ctx.store);
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
    registerWebhooks(ctx.store, [hook], new Date().toISOString()); // starts after packet 186108's events
    receiver.status = 503;
    const seen = receiver.posts.length;
    const dispatcher = startWebhookDispatcher(
      {
        store: ctx.store,
        source: changeStreamSource,
        logger: testLogger(),
        userAgent: 'livefeed/test',
        signal: controller.signal,
        idle: () => outsideTransaction(ctx.store, controller.signal),
        retryScheduleMs: [200, 400],
      },
      [hook],
    );
    const before = streamIds(ctx.store).length;
    await syncOnce(ctx, { to: 186112 });
    dispatcher.kick();
    await until(() => (webhookState(ctx.store, 'retry')?.attempts ?? 0) >= 2, 'two failed attempts');
    expect(webhookState(ctx.store, 'retry')).toMatchObject({
      lastError: 'HTTP 503: receiver says no',
      deliveredEvents: 0,
    });
    receiver.status = 200;
    const all = streamIds(ctx.store);
    await until(() => webhookState(ctx.store, 'retry')?.attempts === 0, 'the retry that succeeds');
    await dispatcher.stop();
    const accepted = receiver.posts.slice(seen).filter((p) => p.status === 200);
    const ids = accepted.flatMap((p) =>
      (JSON.parse(p.body) as { edges: { id: string }[] }).edges.map((e) => e.id),
    );
    expect(ids).toEqual(all.slice(before));
    expect(webhookState(ctx.store, 'retry')).toMatchObject({
      deliveredEvents: all.length - before,
      nextRetryAt: null,
    });
  });
});

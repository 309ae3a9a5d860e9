import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseKeepFiles } from '../../src/files/retentionPolicy.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { deliverWebhook } from '../../src/webhooks/deliver.js';
import { changeStreamSource } from '../../src/webhooks/source.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';

describeStores('--keep-history keeps what a webhook has not been sent', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let ctx: SyncContext;
  let receiver: Receiver;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    ctx = await syncContextOn(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await db?.close();
    await ctx?.feed.client.close();
    await feed.close();
    await receiver.close();
    await data.cleanup();
  });

  it('prunes only up to the oldest packet a listed webhook waits for; a retired one holds nothing', async () => {
    const hook = {
      name: 'slow',
      url: receiver.url,
      displayUrl: receiver.url,
      secret: 'prune-test-secret-0123456789',
      entities: null,
      mbids: null,
      batchSize: 500,
    };
    await syncOnce(ctx, { to: 186108 });
    await db.webhooks.register([hook], new Date().toISOString());
    const start = (await db.webhooks.states()).find((w) => w.name === 'slow')!.cursor!;
    expect(start).toMatch(/^p1861\d\d$/);
    const awaited = Number(start.slice(1)) + 1;
    await receiver.down();
    await syncOnce(ctx, {});
    expect((await deliverWebhook(deliveryCtx(), hook)).outcome).toBe('failed');

    await db.store.history.prune(parseKeepFiles('2'), new Date(), testLogger());
    expect(await db.reads.historyFrom()).toBe(awaited);

    await receiver.reopen();
    const run = await deliverWebhook(deliveryCtx(), hook);
    expect(run).toMatchObject({ outcome: 'caught-up' });
    expect(run.delivered).toBeGreaterThan(0);
    expect(receiver.accepted()[0]!.edges[0]!.node.packet).toBe(awaited);

    // Sent everything, then retired: the window applies in full.
    await db.webhooks.register([], new Date().toISOString());
    expect((await db.webhooks.states())[0]).toMatchObject({ name: 'slow', retiredAt: expect.any(String) });
    await db.store.history.prune(parseKeepFiles('2'), new Date(), testLogger());
    expect(await db.reads.historyFrom()).toBeGreaterThan(awaited);
  });

  function deliveryCtx() {
    return {
      store: db.webhooks,
      source: changeStreamSource,
      logger: testLogger(),
      userAgent: 'livefeed/test',
    };
  }
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/client.js';
import { historyFrom } from '../../src/db/historyQueries.js';
import { registerWebhooks, webhookState } from '../../src/db/webhookQueries.js';
import { parseKeepFiles } from '../../src/files/retentionPolicy.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { pruneHistory } from '../../src/sync/prune.js';
import { syncOnce } from '../../src/sync/worker.js';
import { deliverWebhook } from '../../src/webhooks/deliver.js';
import { changeStreamSource } from '../../src/webhooks/source.js';
import { syncContext, tempDir, testLogger } from '../support/harness.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';

describe('--keep-history keeps what a webhook has not been sent', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let ctx: SyncContext & { store: Store };
  let receiver: Receiver;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    ctx.store.close();
    await ctx.feed.client.close();
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
    registerWebhooks(ctx.store, [hook], new Date().toISOString());
    const start = webhookState(ctx.store, 'slow')!.cursor!;
    expect(start).toMatch(/^p1861\d\d$/);
    const awaited = Number(start.slice(1)) + 1;
    await receiver.down();
    await syncOnce(ctx, {});
    expect((await deliverWebhook(deliveryCtx(), hook)).outcome).toBe('failed');

    await pruneHistory(ctx.store, parseKeepFiles('2'), new Date(), testLogger());
    expect(historyFrom(ctx.store)).toBe(awaited);

    await receiver.reopen();
    const run = await deliverWebhook(deliveryCtx(), hook);
    expect(run).toMatchObject({ outcome: 'caught-up' });
    expect(run.delivered).toBeGreaterThan(0);
    expect(receiver.accepted()[0]!.edges[0]!.node.packet).toBe(awaited);

    // Sent everything, then retired: the window applies in full.
    registerWebhooks(ctx.store, [], new Date().toISOString());
    await pruneHistory(ctx.store, parseKeepFiles('2'), new Date(), testLogger());
    expect(historyFrom(ctx.store)).toBeGreaterThan(awaited);
  });

  function deliveryCtx() {
    return { store: ctx.store, source: changeStreamSource, logger: testLogger(), userAgent: 'livefeed/test' };
  }
});

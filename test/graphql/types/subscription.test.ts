import { afterAll, beforeAll, expect, it } from 'vitest';
import { ENTITY_TYPES } from '../../../src/feed/entities.js';
import type { App } from '../../../src/http/app.js';
import { createGraphql } from '../../../src/http/graphql.js';
import { createPacketEvents } from '../../../src/ops/events.js';
import { createMetrics } from '../../../src/ops/metrics.js';
import { createOps, instrumentSync } from '../../../src/ops/wiring.js';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../../src/samplefeed/server.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { describeAppStores } from '../../support/appStores.js';
import { syncContextOn, tempDir, testLogger, testService } from '../../support/harness.js';
import { readBundledManifest } from '../../support/manifest.js';
import { watchOf } from '../../support/packetWatch.js';
import { openSse } from '../../support/sse.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';

const manifest = readBundledManifest();
const SUBSCRIPTION = 'subscription { packetSynced { number timestamp syncedAt } }';

type Payload = { data: { packetSynced: { number: number; syncedAt: string | null } } };

/** Opens the subscription as server-sent events through `yoga.fetch`. */
const subscribe = (app: Pick<App, 'yoga'>) =>
  openSse<Payload>((url, init) => app.yoga.fetch(url, init), 'http://livefeed.test', SUBSCRIPTION);

describeAppStores(
  'subscription packetSynced',
  async (_writer, _dir, db) => {
    const now = new Date().toISOString();
    await db.rows(
      'INSERT INTO packets (number, timestamp, synced_at, created_at) VALUES (7, ?, ?, ?)',
      now,
      now,
      now,
    );
  },
  (_kind, run) => {
    it('sends each published packet as a server-sent event', async () => {
      const { app } = run();
      const sse = await subscribe(app);
      // Publish until the subscriber is attached (the pubsub keeps no history).
      const timer = setInterval(() => app.events.publish('packetSynced', 7), 20);
      try {
        const event = await sse.next();
        expect(event.data.packetSynced).toMatchObject({ number: 7, syncedAt: expect.any(String) });
      } finally {
        clearInterval(timer);
        await sse.close();
      }
    });

    it('a packet announced but not in the database is an error of the event, not a silent skip', async () => {
      const { app } = run();
      const sse = await subscribe(app);
      const timer = setInterval(() => app.events.publish('packetSynced', 99), 20);
      try {
        const event = await sse.next();
        expect(event).toMatchObject({
          data: null,
          errors: [{ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
        });
      } finally {
        clearInterval(timer);
        await sse.close();
      }
    });
  },
);

describeStores('subscription packetSynced: the sync and the watch', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  beforeAll(async () => {
    data = await tempDir();
    db = await stores.create(data.dir);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await data?.cleanup();
  });

  it('fires from the sync in the same process (livefeed start shares one pubsub)', async () => {
    const ops = await createOps(
      { version: 'test', deployment: 'production', demo: false },
      createPacketEvents(),
    );
    const yoga = createGraphql({
      reads: db.reads,
      display: 'subscription',
      service: testService(),
      logger: testLogger(),
      metrics: createMetrics({ processMetrics: false }),
      events: ops.events!,
    });
    const sse = await subscribe({ yoga });
    await new Promise((resolve) => setImmediate(resolve));
    const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    const ctx = await syncContextOn(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir });
    try {
      const synced = syncOnce(instrumentSync(ctx, ops, testLogger()));
      const first = await sse.next();
      expect(first.data.packetSynced.number).toBe(manifest.firstPacket);
      const second = await sse.next();
      expect(second.data.packetSynced.number).toBe(manifest.firstPacket + 1);
      await synced;
    } finally {
      await sse.close();
      await ctx.feed.client.close();
      await feed.close();
    }
  });

  it('serve alone: watches the database for packets another process completes', async () => {
    const events = createPacketEvents();
    const complete = await db.rows<{ number: number }>(
      'SELECT number FROM packets WHERE synced_at IS NOT NULL ORDER BY number DESC LIMIT 3',
    );
    const [last, middle, first] = complete.map((row) => row.number) as [number, number, number];
    // Complete before the watch begins: never announced.
    for (const packet of [first, middle, last]) await db.store.reopenPacket(packet);
    await db.store.completePackets(
      { from: first, to: first },
      ENTITY_TYPES,
      () => false,
      new Date().toISOString(),
    );
    const stop = await watchOf(stores.kind, db, events);
    const iterator = events.subscribe('packetSynced')[Symbol.asyncIterator]();
    try {
      const received: number[] = [];
      // `last` waits (for a replication packet) while `middle` completes, then completes alone.
      await db.store.completePackets(
        { from: middle, to: last },
        ENTITY_TYPES,
        (packet) => packet === last,
        new Date(Date.now() + 1000).toISOString(),
      );
      received.push((await iterator.next()).value as number);
      await db.store.completePackets(
        { from: last, to: last },
        ENTITY_TYPES,
        () => false,
        new Date(Date.now() + 2000).toISOString(),
      );
      received.push((await iterator.next()).value as number);
      expect(received).toEqual([middle, last]);
    } finally {
      await stop();
      await iterator.return?.();
    }
  });
});

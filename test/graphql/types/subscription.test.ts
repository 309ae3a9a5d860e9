import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/db/client.js';
import { type App, createApp } from '../../../src/http/app.js';
import { createPacketEvents, watchCompletedPackets } from '../../../src/ops/events.js';
import { createOps, instrumentSync } from '../../../src/ops/wiring.js';
import { describeAppStores } from '../../support/appStores.js';
import { tempDir, testLogger, testService } from '../../support/harness.js';
import { readBundledManifest } from '../../support/manifest.js';
import { syncedDatabase } from '../../support/synced.js';

const manifest = readBundledManifest();
const SUBSCRIPTION = 'subscription { packetSynced { number timestamp syncedAt } }';

interface Sse {
  /** The next `data:` payload of an `event: next`. */
  next(): Promise<{ data: { packetSynced: { number: number; syncedAt: string | null } } }>;
  close(): Promise<void>;
}

/** Opens the subscription as server-sent events through `yoga.fetch` (GraphQL over SSE, distinct connections mode). */
async function subscribe(app: Pick<App, 'yoga'>): Promise<Sse> {
  const controller = new AbortController();
  const response = await app.yoga.fetch(
    `http://livefeed.test/graphql?query=${encodeURIComponent(SUBSCRIPTION)}`,
    {
      headers: { accept: 'text/event-stream' },
      signal: controller.signal,
    },
  );
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((l) => l.startsWith('data:'));
          if (block.includes('event: next') && data) return JSON.parse(data.slice(5));
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('event stream ended');
        buffer += value;
      }
    },
    async close() {
      controller.abort();
      await reader.cancel().catch(() => {});
    },
  };
}

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

// The live follow of a sync is step 6 of docs/POSTGRES_PORT.md (LISTEN/NOTIFY): SQLite only here.
describe('subscription packetSynced (SQLite: the sync and the watch)', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  beforeAll(async () => {
    data = await tempDir();
    store = openStore(`${data.dir}/livefeed.db`);
    const now = new Date().toISOString();
    store.sqlite
      .prepare('INSERT INTO packets (number, timestamp, synced_at, created_at) VALUES (7, ?, ?, ?)')
      .run(now, now, now);
  });
  afterAll(async () => {
    store.close();
    await data.cleanup();
  });

  it('fires from the sync in the same process (livefeed start shares one pubsub)', async () => {
    const ops = createOps({ version: 'test', deployment: 'production', demo: false }, createPacketEvents());
    const target = await tempDir();
    const appStore = openStore(`${target.dir}/livefeed.db`);
    const app = createApp({
      store: appStore,
      service: testService(),
      logger: testLogger(),
      dataDir: target.dir,
      events: ops.events,
    });
    const sse = await subscribe(app);
    await new Promise((resolve) => setImmediate(resolve));
    try {
      // The sync writes the same file through its own connection, as in `livefeed start`.
      const synced = syncedDatabase({
        dataDir: target.dir,
        instrument: (ctx) => instrumentSync(ctx, ops, testLogger()),
      });
      const first = await sse.next();
      expect(first.data.packetSynced.number).toBe(manifest.firstPacket);
      const second = await sse.next();
      expect(second.data.packetSynced.number).toBe(manifest.firstPacket + 1);
      await synced;
    } finally {
      await sse.close();
      appStore.close();
      await target.cleanup();
    }
  });

  it('serve alone: watches the database for packets completed by another process', async () => {
    const events = createPacketEvents();
    const reader = openStore(`${data.dir}/livefeed.db`);
    const stop = watchCompletedPackets(reader, events, { intervalMs: 10 });
    const received: number[] = [];
    const iterator = events.subscribe('packetSynced')[Symbol.asyncIterator]();
    try {
      const at = new Date(Date.now() + 1000).toISOString();
      const insert = store.sqlite.prepare(
        'INSERT INTO packets (number, synced_at, created_at) VALUES (?, ?, ?)',
      );
      store.sqlite.transaction(() => {
        insert.run(9, at, at);
        insert.run(8, at, at);
        insert.run(10, null, at);
      })();
      received.push((await iterator.next()).value as number, (await iterator.next()).value as number);
      store.sqlite
        .prepare('UPDATE packets SET synced_at = ? WHERE number = 10')
        .run(new Date(Date.now() + 2000).toISOString());
      received.push((await iterator.next()).value as number);
      // Packet 7 was complete before the watch began: never announced.
      expect(received).toEqual([8, 9, 10]);
    } finally {
      stop();
      await iterator.return?.();
      reader.close();
    }
  });
});

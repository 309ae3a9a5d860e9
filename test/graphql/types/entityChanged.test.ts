import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore } from '../../../src/db/postgres/client.js';
import { watchPostgresPackets } from '../../../src/db/postgres/listen.js';
import { postgresReads } from '../../../src/db/postgres/reads.js';
import { createGraphql } from '../../../src/http/graphql.js';
import { createPacketEvents, type PacketEvents, watchCompletedPackets } from '../../../src/ops/events.js';
import { createMetrics } from '../../../src/ops/metrics.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import { GrowingFeed } from '../../support/growingFeed.js';
import { type GqlResult, tempDir, testLogger, testService } from '../../support/harness.js';
import { listen } from '../../support/listen.js';
import { AppServers } from '../../support/serveApp.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';
import { syncPassOn } from '../../support/synced.js';

const SELECTION = `__typename
  ... on EntityChange { mbid type packet position }
  ... on EntityRemoval { mbid type packet kind }`;

interface Event {
  __typename: string;
  mbid: string;
  packet: number;
  kind?: string;
}
const label = (n: Event) => `${n.packet} ${n.__typename === 'EntityChange' ? 'change' : n.kind} ${n.mbid}`;

/** `entityChanged` over server-sent events from a real HTTP server; collects each event's node. */
async function subscribe(origin: string, args: string) {
  const controller = new AbortController();
  const query = `subscription { entityChanged${args} { ${SELECTION} } }`;
  const response = await fetch(`${origin}/graphql?query=${encodeURIComponent(query)}`, {
    headers: { accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Event[] = [];
  let buffer = '';
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data:'));
        if (block.includes('event: next') && data) {
          const payload = JSON.parse(data.slice(5));
          if (payload.errors) throw new Error(JSON.stringify(payload.errors));
          events.push(payload.data.entityChanged);
        }
      }
    }
  })();
  return {
    events,
    async close() {
      controller.abort();
      await reading.catch(() => {});
    },
  };
}

/** A GraphQL query over HTTP (POST). */
async function post(origin: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as GqlResult;
}

/**
 * The server as `serve` runs it over each store, on port 0, with the database watch of its store
 * publishing `packetSynced`: SQLite's polling (ops/events.ts) over a connection of its own,
 * PostgreSQL's LISTEN (db/postgres/listen.ts) and a pool of its own. Resolves once it watches.
 */
async function serveWatching(
  kind: 'sqlite' | 'postgres',
  db: TestDatabase,
  dir: string,
  servers: AppServers,
) {
  const events: PacketEvents = createPacketEvents();
  if (kind === 'sqlite') {
    const { origin } = await servers.start(db.db, { dataDir: dir, events });
    const stop = watchCompletedPackets(servers.open(db.db), events, { intervalMs: 20 });
    return { origin, close: async () => stop() };
  }
  const store = await openPostgresStore({ connectionString: db.db, display: 'entity-changed' });
  const watch = watchPostgresPackets({ connectionString: db.db, display: 'entity-changed' }, events);
  const yoga = createGraphql({
    reads: postgresReads(store),
    display: store.display,
    service: testService(),
    logger: testLogger(),
    metrics: createMetrics({ processMetrics: false }),
    events,
  });
  const server = await listen((req, res) => void yoga(req, res));
  await watch.listening;
  return {
    origin: server.origin,
    close: async () => {
      await server.close();
      await watch.stop();
      await store.close();
    },
  };
}

describeStores(
  'subscription entityChanged (SSE, real server on port 0, a sync writing meanwhile)',
  (stores) => {
    let dir: Awaited<ReturnType<typeof tempDir>>;
    let growing: GrowingFeed;
    let feed: SampleFeed;
    let db: TestDatabase;
    const servers = new AppServers();
    const sync = () =>
      syncPassOn(
        db.store,
        { feedRoot: feed.feedRoot, dataDir: dir.dir, replicationPackets: true },
        growing.manifest.firstPacket,
      );

    beforeAll(async () => {
      dir = await tempDir('lf-live-');
      growing = new GrowingFeed(`${dir.dir}/feed`);
      await growing.publishUpTo(growing.manifest.firstPacket + 14);
      feed = await startSampleFeed({ root: growing.root });
      db = await stores.create(dir.dir);
      await sync();
    }, 120_000);
    afterAll(async () => {
      await servers.closeAll();
      await db?.close();
      await feed?.close();
      await dir?.cleanup();
    });

    it('delivers the events of each packet reaching the stream, in stream order, as changeFeed serves them', async () => {
      const { firstPacket, lastPacket } = growing.manifest;
      const served = await serveWatching(stores.kind, db, dir.dir, servers);
      const { origin } = served;
      const head = await post(origin, '{ changeFeed(first: 500) { pageInfo { endCursor } } }');
      const cursor = head.data!.changeFeed.pageInfo.endCursor as string;
      const all = await subscribe(origin, '');
      const recordings = await subscribe(origin, '(entities: [RECORDING, WORK])');
      try {
        // Let both subscriptions attach before the sync completes packets.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await growing.publishUpTo(lastPacket);
        await sync();
        const expected = growing.expectedEvents(firstPacket + 14, lastPacket - 1);
        await expect.poll(() => all.events.length, { timeout: 10_000 }).toBe(expected.length);
        expect(all.events.map(label)).toEqual(expected);
        const stream = await post(
          origin,
          `query($c: String) { changeFeed(after: $c, first: 500) { nodes { ${SELECTION} } } }`,
          { c: cursor },
        );
        expect(stream.data!.changeFeed.nodes).toEqual(all.events);
        const filtered = growing.expectedEvents(firstPacket + 14, lastPacket - 1, ['recording', 'work']);
        await expect.poll(() => recordings.events.length, { timeout: 10_000 }).toBe(filtered.length);
        expect(recordings.events.map(label)).toEqual(filtered);
      } finally {
        await all.close();
        await recordings.close();
        await served.close();
      }
    }, 120_000);
  },
);

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPacketEvents } from '../../../src/ops/events.js';
import { createOps, instrumentSync } from '../../../src/ops/wiring.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncContext } from '../../../src/sync/context.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { GrowingFeed } from '../../support/growingFeed.js';
import { gql, syncContext, tempDir, testApp, testLogger } from '../../support/harness.js';
import { AppServers } from '../../support/serveApp.js';

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

describe('subscription entityChanged (SSE, real server on port 0, sync in the same process)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let growing: GrowingFeed;
  let feed: SampleFeed;
  const servers = new AppServers();
  const sync = async (instrument: (ctx: SyncContext) => SyncContext = (ctx) => ctx) => {
    const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: dir.dir, replicationPackets: true });
    try {
      const { problems } = await syncOnce(instrument(ctx), { from: growing.manifest.firstPacket });
      expect(problems).toEqual([]);
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
  };

  beforeAll(async () => {
    dir = await tempDir('lf-live-');
    growing = new GrowingFeed(`${dir.dir}/feed`);
    await growing.publishUpTo(growing.manifest.firstPacket + 14);
    feed = await startSampleFeed({ root: growing.root });
    await sync();
  }, 120_000);
  afterAll(async () => {
    await servers.closeAll();
    await feed?.close();
    await dir?.cleanup();
  });

  it('delivers the events of each packet reaching the stream, in stream order, as changeFeed serves them', async () => {
    const { firstPacket, lastPacket } = growing.manifest;
    const ops = createOps({ version: 'test', deployment: 'production', demo: false }, createPacketEvents());
    const { origin } = await servers.start(`${dir.dir}/livefeed.db`, {
      dataDir: dir.dir,
      events: ops.events,
    });
    const reader = testApp(`${dir.dir}/livefeed.db`, dir.dir);
    const head = await gql(reader, '{ changeFeed(first: 500) { pageInfo { endCursor } } }');
    const cursor = head.data!.changeFeed.pageInfo.endCursor as string;
    const all = await subscribe(origin, '');
    const recordings = await subscribe(origin, '(entities: [RECORDING, WORK])');
    try {
      // Let both subscriptions attach before the sync publishes.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await growing.publishUpTo(lastPacket);
      await sync((ctx) => instrumentSync(ctx, ops, testLogger()));
      const expected = growing.expectedEvents(firstPacket + 14, lastPacket - 1);
      await expect.poll(() => all.events.length, { timeout: 10_000 }).toBe(expected.length);
      expect(all.events.map(label)).toEqual(expected);
      const stream = await gql(
        reader,
        `query($c: String) { changeFeed(after: $c, first: 500) { nodes { ${SELECTION} } } }`,
        {
          c: cursor,
        },
      );
      expect(stream.data!.changeFeed.nodes).toEqual(all.events);
      const filtered = growing.expectedEvents(firstPacket + 14, lastPacket - 1, ['recording', 'work']);
      await expect.poll(() => recordings.events.length, { timeout: 10_000 }).toBe(filtered.length);
      expect(recordings.events.map(label)).toEqual(filtered);
    } finally {
      await all.close();
      await recordings.close();
      reader.store.close();
    }
  }, 120_000);
});

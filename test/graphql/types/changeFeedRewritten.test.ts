import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { describeAppStores } from '../../support/appStores.js';
import { FEED, follow, label } from '../../support/changeFeedGql.js';
import { GrowingFeed } from '../../support/growingFeed.js';
import { type GqlResult, gql } from '../../support/harness.js';
import { listen } from '../../support/listen.js';
import { readBundledManifest } from '../../support/manifest.js';
import { statusScreen } from '../../support/statusScreen.js';
import { syncPassFrom } from '../../support/syncPass.js';

/**
 * The change stream when older packets are stored behind its readers (db/feedRewrites.ts), on
 * both stores: a database synced from the middle of the bundled feed, a client that followed it
 * to the head, then a sync `--from` the feed's first packet, which stores events before the
 * client's cursor. The old cursor gets HISTORY_REWRITTEN with a cursor to read again from, never
 * a page that silently skips the older events; reading from that cursor gives every event once
 * more, in order; and a normal sync of new packets afterwards rewrites nothing.
 */

const { firstPacket, lastPacket } = readBundledManifest();
/** Where the first sync starts: the packets before it are stored later, behind the client. */
const MIDDLE = firstPacket + 8;
/** The packets published before the last sync: the rest come as a normal sync's new packets. */
const PUBLISHED_FIRST = lastPacket - 3;

const feeds = new Map<SyncStore['kind'], { growing: GrowingFeed; feed: SampleFeed; dir: string }>();

/** One sync pass of the published feed from `from`, replication packets on. */
function sync(writer: SyncStore, from: number): Promise<void> {
  const { feed, dir } = feeds.get(writer.kind)!;
  return syncPassFrom(writer, { feedRoot: feed.feedRoot, dataDir: dir }, from);
}

async function build(writer: SyncStore, dir: string): Promise<void> {
  const growing = new GrowingFeed(join(dir, 'feed'));
  await growing.publishUpTo(PUBLISHED_FIRST);
  feeds.set(writer.kind, { growing, feed: await startSampleFeed({ root: growing.root }), dir });
  await sync(writer, MIDDLE);
}

describeAppStores('changeFeed when older packets are stored behind a cursor', build, (kind, run) => {
  const app = () => run().app;
  const growing = () => feeds.get(kind)!.growing;
  let before: { seen: string[]; cursor: string | null };

  beforeAll(async () => {
    const followed = await follow(app(), null, {}, 50);
    before = { seen: followed.seen.map(label), cursor: followed.cursor };
    await sync(run().db.store, firstPacket);
  }, 120_000);
  afterAll(async () => {
    await feeds.get(kind)?.feed.close();
  });

  it('the stream first served only the packets synced from the middle on', () => {
    // The newest packet waits for a later packet's JSON dumps (changeFeed.test.ts).
    expect(before.seen).toEqual(growing().expectedEvents(MIDDLE, PUBLISHED_FIRST - 1));
  });

  it('the old cursor gets HISTORY_REWRITTEN and a cursor that reads every event again, in order', async () => {
    const refused: GqlResult = await gql(app(), FEED, { after: before.cursor, first: 5 });
    expect(refused.data).toBeNull();
    expect(refused.errors).toHaveLength(1);
    const error = refused.errors![0]!;
    expect(error.extensions).toMatchObject({ code: 'HISTORY_REWRITTEN', rewrittenFrom: firstPacket });
    expect(error.message).toContain(
      `events of packet ${firstPacket} and later were stored after this position was made`,
    );
    expect(error.message).toMatch(/See "Change stream" in the README\.$/);
    const again = await follow(app(), (error.extensions as { cursor: string }).cursor, {}, 7);
    expect(again.seen.map(label)).toEqual(growing().expectedEvents(firstPacket, PUBLISHED_FIRST - 1));
    // The new cursor stands: nothing more, no error.
    expect((await follow(app(), again.cursor)).seen).toEqual([]);
    // So does a new client's: it sees the same events once.
    const fresh = await follow(app(), null, {}, 11);
    expect(fresh.seen.map(label)).toEqual(again.seen.map(label));
    expect(fresh.cursor).toBe(again.cursor);
  });

  it('status and /metrics show the epoch and the newest packet stored behind readers', async () => {
    // The sync --from stored packets firstPacket..MIDDLE - 1 behind the client, in order: on SQLite
    // one epoch per packet (its archives share its transaction), on PostgreSQL one per archive.
    const behind = MIDDLE - firstPacket;
    const screen = await statusScreen(run().db, new Date());
    const epoch = Number(/stream {5}served up to packet (\d+), epoch (\d+);/.exec(screen)?.[2]);
    if (kind === 'sqlite') expect(epoch).toBe(behind);
    else expect(epoch).toBeGreaterThan(behind);
    expect(screen).toContain(
      `  stream     served up to packet ${PUBLISHED_FIRST - 1}, epoch ${epoch}; newest packet stored behind readers: ${MIDDLE - 1}\n` +
        '             cursors of an earlier epoch at or after such a packet get HISTORY_REWRITTEN (README, "Older packets stored later")',
    );
    const server = await listen(app().handle);
    try {
      const text = await (await fetch(`${server.origin}/metrics`)).text();
      expect(text).toContain(`\nlivefeed_change_stream_epoch ${epoch}\n`);
      expect(text).toContain(`\nlivefeed_change_stream_last_rewritten_packet ${MIDDLE - 1}\n`);
      expect(text).toContain(`\nlivefeed_change_stream_frontier_packet ${PUBLISHED_FIRST - 1}\n`);
    } finally {
      await server.close();
    }
  });

  it('totalCount refuses the old cursor the same way', async () => {
    const answer: GqlResult = await gql(
      app(),
      '{ changeFeed(after: $a) { totalCount } }'.replace('$a', JSON.stringify(before.cursor)),
    );
    expect(answer.errors?.[0]?.extensions).toMatchObject({
      code: 'HISTORY_REWRITTEN',
      rewrittenFrom: firstPacket,
    });
  });

  it('a normal sync of new packets afterwards rewrites nothing: a cursor of the new epoch reads on', async () => {
    const head = await follow(app(), null, {}, 50);
    await growing().publishUpTo(lastPacket);
    await sync(run().db.store, firstPacket);
    const next = await follow(app(), head.cursor, {}, 5);
    expect(next.seen.map(label)).toEqual(growing().expectedEvents(PUBLISHED_FIRST, lastPacket - 1));
    const [rewrites] = await run().db.rows<{ value: string }>(
      "SELECT value FROM meta WHERE key = 'feed_rewrites'",
    );
    // Every packet stored behind the first client, and only those: on SQLite one rewrite per packet
    // (its archives share the packet's transaction, db/feedServed.ts), on PostgreSQL one per archive.
    const stored = JSON.parse(rewrites!.value) as [number, number][];
    const packets = stored.map(([, packet]) => packet);
    const behind = Array.from({ length: MIDDLE - firstPacket }, (_, i) => firstPacket + i);
    expect([...new Set(packets)]).toEqual(behind);
    if (kind === 'sqlite') expect(packets).toEqual(behind);
    else expect(packets.length).toBeGreaterThan(behind.length);
    expect(stored.map(([epoch]) => epoch)).toEqual(packets.map((_, i) => i + 1));
  });
});

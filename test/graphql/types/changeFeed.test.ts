import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { describeAppStores } from '../../support/appStores.js';
import { FEED, follow, label } from '../../support/changeFeedGql.js';
import { GrowingFeed } from '../../support/growingFeed.js';
import { gql, syncContextOn } from '../../support/harness.js';

/** `changeFeed` on both stores; `--keep-history` and HISTORY_PRUNED: changeFeedPruned.test.ts. */

/** The growing feed and its server of one run (one per store), made by {@link build}. */
const feeds = new Map<SyncStore['kind'], { growing: GrowingFeed; feed: SampleFeed; dir: string }>();

/** One sync pass of what the growing feed has published so far, replication packets on. */
async function sync(writer: SyncStore): Promise<void> {
  const { growing, feed, dir } = feeds.get(writer.kind)!;
  const ctx = await syncContextOn(writer, {
    feedRoot: feed.feedRoot,
    dataDir: dir,
    replicationPackets: true,
  });
  try {
    const { problems } = await syncOnce(ctx, { from: growing.manifest.firstPacket });
    expect(problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
  }
}

/** Sync 1: the bundled feed's first eight packets. */
async function build(writer: SyncStore, dir: string): Promise<void> {
  const growing = new GrowingFeed(join(dir, 'feed'));
  await growing.publishUpTo(growing.manifest.firstPacket + 7);
  feeds.set(writer.kind, { growing, feed: await startSampleFeed({ root: growing.root }), dir });
  await sync(writer);
}

describeAppStores(
  'changeFeed: a client follows the stream across syncs (real sync, replication packets)',
  build,
  (kind, run) => {
    const app = () => run().app;
    const growing = () => feeds.get(kind)!.growing;
    /** The newest complete packet, as the latest-packet mark holds it. */
    const latestPacket = async () =>
      JSON.parse(
        (await run().db.rows<{ value: string }>("SELECT value FROM meta WHERE key = 'latest_packet'"))[0]!
          .value,
      ).number as number;
    const iso = (packet: number) =>
      growing()
        .manifest.packets.find((p) => p.number === packet)!
        .timestamp.replace(' ', 'T')
        .replace(/\+00$/, 'Z');
    afterAll(async () => {
      await feeds.get(kind)?.feed.close();
    });

    it('sees every change and removal exactly once, in stream order, and never a packet still settling', async () => {
      const { firstPacket, lastPacket } = growing().manifest;
      // Sync 1 held 186100..186107: the newest packet waits for a later packet's JSON dumps (settled
      // only by --settle-after so far), so the stream stops before it.
      expect(await latestPacket()).toBe(firstPacket + 7);
      const waiting = await gql(app(), '{ changeFeed(first: 2) { totalCount } }');
      expect(waiting.data!.changeFeed.totalCount).toBe(
        growing().expectedEvents(firstPacket, firstPacket + 6).length,
      );
      let { seen, cursor } = await follow(app(), null);
      expect(seen.map(label)).toEqual(growing().expectedEvents(firstPacket, firstPacket + 6));
      expect((await follow(app(), cursor)).seen).toEqual([]);
      const none = await gql(app(), 'query($c: String) { changeFeed(after: $c) { totalCount } }', {
        c: cursor,
      });
      expect(none.data!.changeFeed.totalCount).toBe(0);

      const all = [...seen];
      for (const last of [firstPacket + 15, lastPacket]) {
        await growing().publishUpTo(last);
        await sync(run().db.store);
        ({ seen, cursor } = await follow(app(), cursor));
        all.push(...seen);
        expect((await follow(app(), cursor)).seen).toEqual([]);
      }
      // The last packet has no later packet's dumps: not served yet.
      expect(all.map(label)).toEqual(growing().expectedEvents(firstPacket, lastPacket - 1));
      expect(new Set(all.map(label)).size).toBe(all.length);
      expect(all.filter((n) => n.__typename === 'EntityRemoval').map((n) => n.kind)).toEqual([
        'MERGED',
        'DELETED',
      ]);
      expect(all.every((n) => typeof n.timestamp === 'string')).toBe(true);
    }, 120_000);

    it('filters by entity type, MBID and time, and binds the cursor to its filters', async () => {
      const { firstPacket } = growing().manifest;
      const artists = await follow(app(), null, { entities: ['ARTIST'] }, 500);
      expect(artists.seen.map(label)).toEqual(
        growing().expectedEvents(firstPacket, firstPacket + 22, ['artist']),
      );
      expect(artists.seen.length).toBeGreaterThan(1);
      expect(artists.seen.every((n) => (n as unknown as { type: string }).type === 'ARTIST')).toBe(true);

      const removed = growing().manifest.packets.find((p) => p.replication?.removals.length)!.replication!
        .removals[0]!;
      const byMbid = await follow(app(), null, { mbids: [removed.mbid.toUpperCase()] }, 500);
      expect(byMbid.seen.map(label)).toEqual(
        growing()
          .expectedEvents(firstPacket, firstPacket + 22)
          .filter((e) => e.endsWith(removed.mbid)),
      );
      expect(byMbid.seen.map((n) => n.__typename)).toContain('EntityRemoval');

      const packets = growing().manifest.packets;
      const since = iso(firstPacket + 3);
      const until = iso(firstPacket + 5);
      const window = await follow(app(), null, { since, until }, 500);
      expect(window.seen.map(label)).toEqual(growing().expectedEvents(firstPacket + 3, firstPacket + 5));
      expect(packets.length).toBeGreaterThan(6);

      const other = await gql(app(), FEED, { after: artists.cursor, entities: ['LABEL'] });
      expect(other.errors?.[0]?.extensions?.code).toBe('BAD_CURSOR');
      const garbage = await gql(app(), FEED, { after: 'not-a-cursor' });
      expect(garbage.errors?.[0]?.extensions?.code).toBe('BAD_CURSOR');
      const tooMany = await gql(app(), FEED, { first: 501 });
      expect(tooMany.errors?.[0]?.extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
      // An empty list of MBIDs would follow nothing: refused, never read as "every MBID".
      const noMbids = await gql(app(), FEED, { mbids: [] });
      expect(noMbids.errors?.[0]).toMatchObject({
        message: '"mbids" is an empty list, which would match no event; leave it out to follow every MBID',
        extensions: { code: 'BAD_USER_INPUT' },
      });
      expect(noMbids.data).toBeNull();
    });

    it('refuses a DateTime literal that is no instant, saying which and where', async () => {
      for (const given of ['yesterday', '2026-02-30T00:00:00Z', '2026-99-99T99:99:99Z']) {
        const answer = await gql(app(), `{ changeFeed(since: "${given}") { totalCount } }`);
        expect(answer.errors?.[0], given).toMatchObject({
          message: `DateTime must be ISO 8601 UTC, e.g. 2026-05-11T21:14:26Z; got "${given}"`,
          locations: [{ line: 1, column: 21 }],
          extensions: { code: 'BAD_USER_INPUT' },
        });
      }
      const fine = await gql(app(), '{ changeFeed(since: "2026-02-28T23:59:59.5Z") { totalCount } }');
      expect(fine.errors).toBeUndefined();
    });

    it("a day's changes of one entity type fit one request within the cost limit, as lines or as diffs", async () => {
      const { firstPacket, lastPacket } = growing().manifest;
      const expected = growing().expectedEvents(firstPacket, lastPacket - 1, ['recording']).length;
      // `diff` reads ctx.store until changeVersions.ts reads ctx.reads (another helper's part of step 4).
      const versions = kind === 'sqlite' ? ['data', 'diff { op path from value }'] : ['data'];
      for (const version of versions) {
        const day = `{
        changeFeed(first: 500, entities: [RECORDING]) {
          pageInfo { hasNextPage endCursor }
          nodes {
            ... on EntityChange { mbid type packet position timestamp name ${version} }
            ... on EntityRemoval { mbid type packet kind mergedInto timestamp }
          }
        }
      }`;
        const answer = await gql(app(), day);
        expect(answer.errors).toBeUndefined();
        expect(answer.data!.changeFeed.nodes).toHaveLength(expected);
        expect(answer.data!.changeFeed.pageInfo.hasNextPage).toBe(false);
      }
    });

    it('first: 0 says whether events wait, with a cursor that reads on from the same place', async () => {
      const zero = await gql(app(), FEED, { first: 0 });
      expect(zero.errors).toBeUndefined();
      expect(zero.data!.changeFeed.nodes).toEqual([]);
      expect(zero.data!.changeFeed.pageInfo.hasNextPage).toBe(true);
      const start = zero.data!.changeFeed.pageInfo.endCursor as string;
      expect(start).toEqual(expect.any(String));
      const fromStart = await gql(app(), FEED, { first: 7 });
      const fromZero = await gql(app(), FEED, { first: 7, after: start });
      expect(fromZero.data!.changeFeed.nodes).toEqual(fromStart.data!.changeFeed.nodes);
      expect(fromZero.data!.changeFeed.nodes).toHaveLength(7);
      // Mid-stream and at the end: the cursor stays put, and says whether more wait.
      const page = await gql(app(), FEED, { first: 3 });
      const mid = page.data!.changeFeed.pageInfo.endCursor as string;
      const stay = await gql(app(), FEED, { first: 0, after: mid });
      expect(stay.data!.changeFeed.pageInfo).toMatchObject({ hasNextPage: true, endCursor: mid });
      const { cursor: end } = await follow(app(), null);
      const atEnd = await gql(app(), FEED, { first: 0, after: end });
      expect(atEnd.data!.changeFeed.pageInfo).toMatchObject({ hasNextPage: false, endCursor: end });
    });
  },
);

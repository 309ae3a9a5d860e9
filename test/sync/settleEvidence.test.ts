import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEFAULT_FRESHNESS, freshness } from '../../src/ops/freshness.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { pgTimestamp, writeJsonDump } from '../support/archives.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import { writeReplicationPacket } from '../support/replicationArchives.js';
import { statusScreen } from '../support/statusScreen.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

/**
 * Issue 11: upstream's JSON dump job halts (schema change, stuck run) and publishes hours later, in
 * packet order (FEED.md, Errors). Only a later packet's JSON dump settles a 404; no hour is lost.
 * On both stores (issue 17).
 */

const HOUR = 3_600_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ARTIST = (n: number) => JSON.stringify({ id: id(n), name: `Artist ${n}`, type: 'Person' });
const AREA = (n: number) => JSON.stringify({ id: id(n), name: `Town ${n}`, type: 'City' });

describeStores('a halted upstream JSON dump job', (stores) => {
  let db: TestDatabase | undefined;
  let ctx: SyncContext | undefined;
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  const clock = new Date('2026-11-22T12:00:00Z');
  // Packet 40 at 6 h ago; the dump job halts after it: 41, 42, 43 (5, 4 and 3 h old) wait.
  const at = (packet: number) => pgTimestamp(new Date(clock.getTime() - (46 - packet) * HOUR));

  async function publish(packet: number, entities: ('artist' | 'area')[]): Promise<void> {
    for (const entity of entities) {
      await writeJsonDump(feedDir.dir, {
        packet,
        entity,
        timestamp: at(packet),
        lines: [entity === 'artist' ? ARTIST(packet) : AREA(packet)],
      });
    }
  }

  beforeEach(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    // The replication job is not halted: replication-info lists packet 43.
    for (let packet = 40; packet <= 43; packet++) {
      await writeReplicationPacket(feedDir.dir, { packet, format: 'v2', timestamp: at(packet), rows: [] });
    }
    await publish(40, ['artist']);
    feed = await startSampleFeed({ root: feedDir.dir });
  });
  afterEach(async () => {
    await ctx?.feed.client.close();
    await db?.close();
    [ctx, db] = [undefined, undefined];
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  async function statuses(packet: number): Promise<Record<string, string>> {
    const rows = await db!.rows<{ entity: string; status: string }>(
      'SELECT entity, status FROM dumps WHERE packet = ? ORDER BY entity',
      packet,
    );
    return Object.fromEntries(rows.map((r) => [r.entity, r.status]));
  }

  async function context(settleAfterMs: number | null): Promise<SyncContext> {
    db = await stores.create(dataDir.dir);
    const base = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      // The replication packets give each packet its TIMESTAMP (what --settle-after counts from).
      replicationPackets: true,
    });
    ctx = { ...base, policy: { ...base.policy, settleAfterMs }, now: () => clock };
    return ctx;
  }

  it('by default a sync during the halt leaves the three packets PENDING; a sync after stores them all', async () => {
    const ctx = await context(null);
    const during = await syncOnce(ctx, { from: 40 });
    expect(during.latest).toBe(43);
    for (const packet of [41, 42, 43])
      expect(await statuses(packet)).toEqual({ area: 'PENDING', artist: 'PENDING' });
    // Not even packet 40's area is settled: no later dump has been seen.
    expect(await statuses(40)).toEqual({ area: 'PENDING', artist: 'SYNCED' });
    expect(during.completed).toEqual([]);

    // /freshness and livefeed status say plainly what is waiting, and since when.
    const f = await freshness(db!.reads, DEFAULT_FRESHNESS, clock);
    expect(f.waiting).toEqual({
      packets: 4,
      oldest: 40,
      oldestTimestamp: expect.any(String),
      since: clock.toISOString(),
      reason: null,
    });
    expect(f.message).toContain(
      '4 packets wait for JSON dumps the feed did not have when last asked, since packet 40',
    );
    const screen = await statusScreen(db!, clock);
    expect(screen).toMatch(
      /waiting {4}4 packets wait for JSON dumps the feed did not have when last asked, since packet 40/,
    );

    // The job resumes and publishes the three hours, in order.
    await publish(41, ['artist', 'area']);
    await publish(42, ['area']);
    await publish(43, ['artist']);
    const after = await syncOnce(ctx);
    expect(await statuses(41)).toEqual({ area: 'SYNCED', artist: 'SYNCED' });
    expect(await statuses(42)).toEqual({ area: 'SYNCED', artist: 'NO_CHANGES' });
    expect(await statuses(43)).toEqual({ area: 'PENDING', artist: 'SYNCED' });
    expect(await statuses(40)).toEqual({ area: 'NO_CHANGES', artist: 'SYNCED' });
    expect(after.completed).toEqual([40, 41, 42]);
    const stored = await db!.rows('SELECT packet, mbid FROM changes ORDER BY packet, entity');
    expect(stored).toEqual([
      { packet: 40, mbid: id(40) },
      { packet: 41, mbid: id(41) },
      { packet: 41, mbid: id(41) },
      { packet: 42, mbid: id(42) },
      { packet: 43, mbid: id(43) },
    ]);
    expect((await freshness(db!.reads, DEFAULT_FRESHNESS, clock)).waiting).toMatchObject({
      packets: 1,
      oldest: 43,
    });
  });

  it('with --settle-after, a dump settled by time is asked again once a later dump shows up, and stored', async () => {
    const ctx = await context(2 * HOUR);
    await syncOnce(ctx, { from: 40 });
    for (const packet of [41, 42, 43])
      expect(await statuses(packet)).toEqual({ area: 'NO_CHANGES', artist: 'NO_CHANGES' });
    const settledBy = await db!.rows(
      `SELECT DISTINCT settled_by AS by FROM dumps WHERE status = 'NO_CHANGES'`,
    );
    expect(settledBy).toEqual([{ by: 'TIME' }]);

    // The job catches up, and packet 44 (new) has a dump: evidence for 41..43.
    await publish(41, ['artist', 'area']);
    await publish(42, ['area']);
    await publish(43, ['artist']);
    await writeReplicationPacket(feedDir.dir, { packet: 44, format: 'v2', timestamp: at(44), rows: [] });
    await publish(44, ['area']);
    const before = feed.requests.length;
    await syncOnce(ctx);
    expect(await statuses(41)).toEqual({ area: 'SYNCED', artist: 'SYNCED' });
    expect(await statuses(42)).toEqual({ area: 'SYNCED', artist: 'NO_CHANGES' });
    expect(await statuses(43)).toEqual({ area: 'NO_CHANGES', artist: 'SYNCED' });
    // Each time-settled dump was asked once more, and is settled on evidence now.
    const asked = feed.requests.slice(before).map((r) => r.path);
    expect(asked.filter((p) => p.endsWith('json-dump-42/artist.tar.xz'))).toHaveLength(1);
    expect(
      await db!.rows(
        `SELECT count(*) AS n FROM dumps WHERE settled_by = 'TIME' AND packet BETWEEN 41 AND 43`,
      ),
    ).toEqual([{ n: 0 }]);
    // A second pass asks for none of them again.
    const again = feed.requests.length;
    await syncOnce(ctx);
    expect(feed.requests.slice(again).filter((r) => /json-dump-4[0-3]\//.test(r.path))).toEqual([]);
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sqliteReads } from '../../src/db/reads.js';
import { DEFAULT_FRESHNESS, freshness } from '../../src/ops/freshness.js';
import { collectStatus, renderStatus } from '../../src/ops/statusReport.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { writeJsonDump } from '../support/archives.js';
import { syncContext, tempDir } from '../support/harness.js';
import { writeReplicationPacket } from '../support/replicationArchives.js';

/**
 * Issue 11: upstream's JSON dump job halts (schema change, stuck run) and publishes hours later, in
 * packet order (FEED.md, Errors). Only a later packet's JSON dump settles a 404; no hour is lost.
 */

const HOUR = 3_600_000;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ARTIST = (n: number) => JSON.stringify({ id: id(n), name: `Artist ${n}`, type: 'Person' });
const AREA = (n: number) => JSON.stringify({ id: id(n), name: `Town ${n}`, type: 'City' });

function pgText(date: Date): string {
  return `${date.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

type Ctx = Awaited<ReturnType<typeof syncContext>>;

function statuses(ctx: Ctx, packet: number): Record<string, string> {
  const rows = ctx.store.sqlite
    .prepare('SELECT entity, status FROM dumps WHERE packet = ? ORDER BY entity')
    .all(packet) as { entity: string; status: string }[];
  return Object.fromEntries(rows.map((r) => [r.entity, r.status]));
}

describe('a halted upstream JSON dump job', () => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  const clock = new Date('2026-11-22T12:00:00Z');
  // Packet 40 at 6 h ago; the dump job halts after it: 41, 42, 43 (5, 4 and 3 h old) wait.
  const at = (packet: number) => pgText(new Date(clock.getTime() - (46 - packet) * HOUR));

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
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  async function context(settleAfterMs: number | null): Promise<Ctx> {
    const base = await syncContext({
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      // The replication packets give each packet its TIMESTAMP (what --settle-after counts from).
      replicationPackets: true,
    });
    return {
      ...base,
      policy: { ...base.policy, settleAfterMs },
      now: () => clock,
    };
  }

  it('by default a sync during the halt leaves the three packets PENDING; a sync after stores them all', async () => {
    const ctx = await context(null);
    try {
      const during = await syncOnce(ctx, { from: 40 });
      expect(during.latest).toBe(43);
      for (const packet of [41, 42, 43])
        expect(statuses(ctx, packet)).toEqual({ area: 'PENDING', artist: 'PENDING' });
      // Not even packet 40's area is settled: no later dump has been seen.
      expect(statuses(ctx, 40)).toEqual({ area: 'PENDING', artist: 'SYNCED' });
      expect(during.completed).toEqual([]);

      // /freshness and livefeed status say plainly what is waiting, and since when.
      const f = await freshness(sqliteReads(ctx.store), DEFAULT_FRESHNESS, clock);
      expect(f.waiting).toEqual({
        packets: 4,
        oldest: 40,
        oldestTimestamp: expect.any(String),
        since: clock.toISOString(),
      });
      expect(f.message).toContain(
        '4 packets wait for JSON dumps upstream has not published yet, since packet 40',
      );
      const screen = renderStatus(
        await collectStatus(sqliteReads(ctx.store), {
          display: ctx.store.path,
          demo: false,
          upstream: { kind: 'not-asked', reason: 'test' },
          thresholds: DEFAULT_FRESHNESS,
          now: clock,
        }),
      );
      expect(screen).toMatch(
        /waiting {4}4 packets wait for JSON dumps upstream has not published yet, since packet 40/,
      );

      // The job resumes and publishes the three hours, in order.
      await publish(41, ['artist', 'area']);
      await publish(42, ['area']);
      await publish(43, ['artist']);
      const after = await syncOnce(ctx);
      expect(statuses(ctx, 41)).toEqual({ area: 'SYNCED', artist: 'SYNCED' });
      expect(statuses(ctx, 42)).toEqual({ area: 'SYNCED', artist: 'NO_CHANGES' });
      expect(statuses(ctx, 43)).toEqual({ area: 'PENDING', artist: 'SYNCED' });
      expect(statuses(ctx, 40)).toEqual({ area: 'NO_CHANGES', artist: 'SYNCED' });
      expect(after.completed).toEqual([40, 41, 42]);
      const stored = ctx.store.sqlite
        .prepare('SELECT packet, mbid FROM changes ORDER BY packet, entity')
        .all();
      expect(stored).toEqual([
        { packet: 40, mbid: id(40) },
        { packet: 41, mbid: id(41) },
        { packet: 41, mbid: id(41) },
        { packet: 42, mbid: id(42) },
        { packet: 43, mbid: id(43) },
      ]);
      expect((await freshness(sqliteReads(ctx.store), DEFAULT_FRESHNESS, clock)).waiting).toMatchObject({
        packets: 1,
        oldest: 43,
      });
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
  });

  it('with --settle-after, a dump settled by time is asked again once a later dump shows up, and stored', async () => {
    const ctx = await context(2 * HOUR);
    try {
      await syncOnce(ctx, { from: 40 });
      for (const packet of [41, 42, 43])
        expect(statuses(ctx, packet)).toEqual({ area: 'NO_CHANGES', artist: 'NO_CHANGES' });
      const settledBy = ctx.store.sqlite
        .prepare(`SELECT DISTINCT settled_by AS by FROM dumps WHERE status = 'NO_CHANGES'`)
        .all();
      expect(settledBy).toEqual([{ by: 'TIME' }]);

      // The job catches up, and packet 44 (new) has a dump: evidence for 41..43.
      await publish(41, ['artist', 'area']);
      await publish(42, ['area']);
      await publish(43, ['artist']);
      await writeReplicationPacket(feedDir.dir, { packet: 44, format: 'v2', timestamp: at(44), rows: [] });
      await publish(44, ['area']);
      const before = feed.requests.length;
      await syncOnce(ctx);
      expect(statuses(ctx, 41)).toEqual({ area: 'SYNCED', artist: 'SYNCED' });
      expect(statuses(ctx, 42)).toEqual({ area: 'SYNCED', artist: 'NO_CHANGES' });
      expect(statuses(ctx, 43)).toEqual({ area: 'NO_CHANGES', artist: 'SYNCED' });
      // Each time-settled dump was asked once more, and is settled on evidence now.
      const asked = feed.requests.slice(before).map((r) => r.path);
      expect(asked.filter((p) => p.endsWith('json-dump-42/artist.tar.xz'))).toHaveLength(1);
      expect(
        ctx.store.sqlite
          .prepare(`SELECT count(*) AS n FROM dumps WHERE settled_by = 'TIME' AND packet BETWEEN 41 AND 43`)
          .get(),
      ).toEqual({ n: 0 });
      // A second pass asks for none of them again.
      const again = feed.requests.length;
      await syncOnce(ctx);
      expect(feed.requests.slice(again).filter((r) => /json-dump-4[0-3]\//.test(r.path))).toEqual([]);
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
  });
});

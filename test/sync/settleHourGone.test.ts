import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEFAULT_FRESHNESS, freshness } from '../../src/ops/freshness.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { pgTimestamp, writeJsonDump } from '../support/archives.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { writeReplicationPacket } from '../support/replicationArchives.js';
import { statusScreen } from '../support/statusScreen.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

/**
 * A sync after an outage longer than upstream keeps packets (FEED.md: "old ones may be gone"), with
 * `--no-replication-packets`: a deleted hour's JSON dumps answer 404 like an hour without changes,
 * and the later packets' dumps would settle them. Every hour has a replication packet, so its 404
 * says the hour is gone: those dumps stay PENDING with the reason, and nothing passes them.
 * On both stores.
 */

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ARTIST = (n: number) => JSON.stringify({ id: id(n), name: `Artist ${n}`, type: 'Person' });
const AREA = (n: number) => JSON.stringify({ id: id(n), name: `Town ${n}`, type: 'City' });
const PACKET_FILE = /\/replication-(\d+)-v2\.tar\.bz2(\.asc)?$/;

describeStores('an hour upstream no longer holds', (stores) => {
  let db: TestDatabase | undefined;
  let ctx: SyncContext | undefined;
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  const logs: string[] = [];
  const clock = new Date('2026-11-22T12:00:00Z');

  beforeEach(async () => {
    logs.length = 0;
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    // Upstream deleted packets 60 and 61 (archives and replication packets); 62 changed no area;
    // 63 is the latest.
    for (const packet of [62, 63])
      await writeReplicationPacket(feedDir.dir, { packet, format: 'v2', rows: [] });
    await writeJsonDump(feedDir.dir, { packet: 62, entity: 'artist', lines: [ARTIST(62)] });
    await writeJsonDump(feedDir.dir, { packet: 63, entity: 'artist', lines: [ARTIST(63)] });
    await writeJsonDump(feedDir.dir, { packet: 63, entity: 'area', lines: [AREA(63)] });
    feed = await startSampleFeed({ root: feedDir.dir });
    db = await stores.create(dataDir.dir);
    const base = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      replicationPackets: false,
      logger: testLogger(logs),
      now: () => clock,
    });
    ctx = { ...base, policy: { ...base.policy, settleAfterMs: null } };
  }, 30_000);
  afterEach(async () => {
    await ctx?.feed.client.close();
    await db?.close();
    [ctx, db] = [undefined, undefined];
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  const statuses = async (packet: number) =>
    Object.fromEntries(
      (
        await db!.rows<{ entity: string; status: string }>(
          'SELECT entity, status FROM dumps WHERE packet = ? ORDER BY entity',
          packet,
        )
      ).map((r) => [r.entity, r.status]),
    );

  it('keeps its JSON dumps PENDING with the reason, settles the held hour after it, and passes nothing', async () => {
    for (let pass = 1; pass <= 2; pass++) {
      const before = feed.requests.length;
      const report = await syncOnce(ctx!, { from: 60 });
      expect(await statuses(60)).toEqual({ area: 'PENDING', artist: 'PENDING' });
      expect(await statuses(61)).toEqual({ area: 'PENDING', artist: 'PENDING' });
      // Packet 62's replication packet is there: its area 404 means no area changed.
      expect(await statuses(62)).toEqual({ area: 'NO_CHANGES', artist: 'SYNCED' });
      expect(await statuses(63)).toEqual({ area: 'SYNCED', artist: 'SYNCED' });
      expect(report.completed).toEqual(pass === 1 ? [62, 63] : []);
      // One question per packet and pass, never a signature or a replication packet stored.
      const asked = feed.requests
        .slice(before)
        .map((r) => PACKET_FILE.exec(r.path))
        .filter((m) => m !== null)
        .map((m) => `${m[1]}${m[2] ?? ''}`);
      expect(asked.sort()).toEqual(pass === 1 ? ['60', '61', '62'] : ['60', '61']);
    }
    expect(await db!.rows('SELECT count(*) AS n FROM replication_packets')).toEqual([{ n: 0 }]);

    // The change stream waits before the gone hours, and every place that reports says why.
    expect((await db!.reads.latestPacket())?.number ?? null).toBe(null);
    const errors = await db!.rows<{ error: string | null }>(
      'SELECT error FROM dumps WHERE packet = 60 ORDER BY entity',
    );
    for (const { error } of errors) {
      expect(error).toContain('upstream may no longer hold packet 60');
      expect(error).toContain('--skip-packets 60 lets them settle (README, How a sync works)');
    }
    const screen = await statusScreen(db!, clock);
    expect(screen).toMatch(
      /waiting {4}2 packets wait for JSON dumps, since packet 60: upstream may no longer hold packet 60: /,
    );
    // /freshness names the gone hour instead of a halted upstream dump job, in text and JSON.
    const f = await freshness(db!.reads, DEFAULT_FRESHNESS, clock);
    expect(f.waiting).toMatchObject({ packets: 2, oldest: 60 });
    expect(f.waiting?.reason).toContain('upstream may no longer hold packet 60');
    expect(f.message).toContain('; 2 packets wait for JSON dumps, since packet 60');
    expect(f.message).toContain('upstream may no longer hold packet 60');
    expect(f.message).not.toContain('did not have when last asked');
    expect(f.message).not.toContain('may be halted');
    const gone = logs.map((line) => JSON.parse(line) as { event?: string; packet?: number });
    expect(gone.filter((l) => l.event === 'hour-gone').map((l) => l.packet)).toEqual([60, 61, 60, 61]);
    expect(logs.join('\n')).not.toContain('token=');
  });

  it('with replication packets: holds the dumps while the replication packet answers 404, until --skip-packets', async () => {
    let at = clock;
    const withPackets = { ...ctx!, policy: { ...ctx!.policy, replicationPackets: true }, now: () => at };
    const first = await syncOnce(withPackets, { from: 60 });
    expect(first.completed).toEqual([62, 63]);
    // Two hours later the replication packets are MISSING; the dumps still wait, saying why.
    at = new Date(clock.getTime() + 2 * 3_600_000);
    await syncOnce(withPackets, { from: 60 });
    expect(
      await db!.rows('SELECT packet, status FROM replication_packets WHERE packet < 62 ORDER BY packet'),
    ).toEqual([
      { packet: 60, status: 'MISSING' },
      { packet: 61, status: 'MISSING' },
    ]);
    for (const packet of [60, 61])
      expect(await statuses(packet)).toEqual({ area: 'PENDING', artist: 'PENDING' });
    const [row] = await db!.rows<{ error: string }>(
      "SELECT error FROM dumps WHERE packet = 61 AND entity = 'area'",
    );
    expect(row!.error).toContain('its replication packet answers 404 as well (MISSING)');
    expect((await db!.reads.latestPacket())?.number ?? null).toBe(null);

    // The operator names the packets upstream lost only the replication packets of.
    const skipping = { ...withPackets, policy: { ...withPackets.policy, skipPackets: new Set([60, 61]) } };
    const last = await syncOnce(skipping, { from: 60 });
    expect(await statuses(60)).toEqual({ area: 'NO_CHANGES', artist: 'NO_CHANGES' });
    expect(last.completed).toEqual([60, 61]);
    expect((await db!.reads.latestPacket())?.number).toBe(63);
  });

  it('leaves a dump settled by --settle-after as it is when its hour is gone before the later dump', async () => {
    const old = pgTimestamp(new Date(clock.getTime() - 3 * 3_600_000));
    await writeJsonDump(feedDir.dir, { packet: 70, entity: 'artist', lines: [ARTIST(70)], timestamp: old });
    const timed = { ...ctx!, policy: { ...ctx!.policy, settleAfterMs: 2 * 3_600_000 } };
    await syncOnce(timed, { from: 70 });
    const settled = () =>
      db!.rows('SELECT status, settled_by FROM dumps WHERE packet = 70 AND entity = ?', 'area');
    expect(await settled()).toEqual([{ status: 'NO_CHANGES', settled_by: 'TIME' }]);

    // Packet 71's dump is evidence, but upstream holds no hour 70: no request settles it by evidence.
    await writeJsonDump(feedDir.dir, { packet: 71, entity: 'artist', lines: [ARTIST(71)], timestamp: old });
    const before = feed.requests.length;
    await syncOnce(timed);
    const asked = feed.requests.slice(before).map((r) => r.path);
    expect(asked.filter((path) => path.endsWith('/replication-70-v2.tar.bz2'))).toHaveLength(1);
    expect(asked.filter((path) => path.endsWith('/json-dump-70/area.tar.xz'))).toEqual([]);
    expect(await settled()).toEqual([{ status: 'NO_CHANGES', settled_by: 'TIME' }]);

    // Held after all: the recheck asks the dump once more and settles it on the evidence.
    await writeReplicationPacket(feedDir.dir, { packet: 70, format: 'v2', rows: [] });
    await syncOnce(timed);
    expect(await settled()).toEqual([{ status: 'NO_CHANGES', settled_by: 'LATER_DUMP' }]);
  });

  it('settles the hour once its replication packet answers (it was not copied yet)', async () => {
    await syncOnce(ctx!, { from: 60 });
    expect(await statuses(61)).toEqual({ area: 'PENDING', artist: 'PENDING' });
    for (const packet of [60, 61])
      await writeReplicationPacket(feedDir.dir, { packet, format: 'v2', rows: [] });
    const report = await syncOnce(ctx!, { from: 60 });
    expect(await statuses(60)).toEqual({ area: 'NO_CHANGES', artist: 'NO_CHANGES' });
    expect(await statuses(61)).toEqual({ area: 'NO_CHANGES', artist: 'NO_CHANGES' });
    expect(report.completed).toEqual([60, 61]);
    expect(await db!.rows('SELECT error FROM dumps WHERE packet = 60')).toEqual([
      { error: null },
      { error: null },
    ]);
    expect((await db!.reads.latestPacket())?.number).toBe(63);
  });

  it('on production, the plain name beside the missing -v2 file holds the hour (copied one after the other)', async () => {
    await writeReplicationPacket(feedDir.dir, { packet: 60, format: 'v1', deployment: 'test', rows: [] });
    await syncOnce(ctx!, { from: 60 });
    expect(await statuses(60)).toEqual({ area: 'NO_CHANGES', artist: 'NO_CHANGES' });
    expect(await statuses(61)).toEqual({ area: 'PENDING', artist: 'PENDING' });
    const asked = feed.requests.map((r) => r.path);
    expect(asked.filter((path) => path.endsWith('/replication-60.tar.bz2'))).toHaveLength(1);
    // Asked only after the -v2 name answered 404: a held hour costs no second request.
    expect(asked.filter((path) => path.endsWith('/replication-62.tar.bz2'))).toEqual([]);
  });
});

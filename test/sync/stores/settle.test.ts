import { afterEach, beforeEach, expect, it } from 'vitest';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncContext } from '../../../src/sync/context.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { pgTimestamp, writeJsonDump } from '../../support/archives.js';
import { syncContextOn, tempDir } from '../../support/harness.js';
import { writeReplicationPacket } from '../../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';

/**
 * Settling missing JSON dumps on both stores (FEED.md, Errors: a 404 can mean "not yet"; only a
 * later packet's JSON dump, or `--settle-after` hours when set, settles it), and a dump settled by
 * time that turns up late. The SQLite run replaces the SQLite-only suite this was ported from.
 */

const ARTIST = (id: string, name: string) => JSON.stringify({ id, name, 'sort-name': name, type: 'Person' });
const AREA = (id: string, name: string) => JSON.stringify({ id, name, type: 'City' });
const A1 = '00000000-0000-4000-8000-000000000001';
const A2 = '00000000-0000-4000-8000-000000000002';

describeStores('settling missing JSON dumps', (stores) => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase;
  let ctx: SyncContext;
  let clock: Date;
  const statusOf = async (packet: number, entity: string) =>
    (
      await db.rows<{ status: string }>(
        'SELECT status FROM dumps WHERE packet = ? AND entity = ?',
        packet,
        entity,
      )
    )[0]?.status;
  const latestMark = async () =>
    (await db.rows<{ value: string }>("SELECT value FROM meta WHERE key = 'latest_packet'"))[0]?.value;

  beforeEach(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    feed = await startSampleFeed({ root: feedDir.dir });
    clock = new Date('2026-11-22T12:00:00Z');
    db = await stores.create(dataDir.dir);
    ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      now: () => clock,
    });
  }, 30_000);
  afterEach(async () => {
    await db.close();
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  it('keeps a fresh packet PENDING, stores a late dump, and settles once a later packet has a dump', async () => {
    const fresh = pgTimestamp(new Date(clock.getTime() - 40 * 60_000));
    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: fresh,
    });

    let report = await syncOnce(ctx, { from: 10 });
    expect(await statusOf(10, 'artist')).toBe('SYNCED');
    expect(await statusOf(10, 'area')).toBe('PENDING');
    expect(report.completed).toEqual([]);
    expect(report.pending).toBe(1);
    expect(await latestMark()).toBe('{"from":10,"number":null}');

    // The area dump lands late: the next poll stores it and the packet completes.
    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'area',
      lines: [AREA(A2, 'Town')],
      timestamp: fresh,
    });
    report = await syncOnce(ctx);
    expect(await statusOf(10, 'area')).toBe('SYNCED');
    expect(report.completed).toEqual([10]);
    expect(await latestMark()).toBe('{"from":10,"number":10}');

    // Packet 11 has only an artist dump; once packet 12's dump exists, 11's area is asked once more and settled.
    const t11 = pgTimestamp(new Date(clock.getTime() - 10 * 60_000));
    // Upstream holds the hour (its replication packet): without replication packets the sync asks.
    await writeReplicationPacket(feedDir.dir, { packet: 11, format: 'v2', rows: [] });
    await writeJsonDump(feedDir.dir, {
      packet: 11,
      entity: 'artist',
      lines: [ARTIST(A1, 'One again')],
      timestamp: t11,
    });
    report = await syncOnce(ctx);
    expect(await statusOf(11, 'area')).toBe('PENDING');

    await writeJsonDump(feedDir.dir, {
      packet: 12,
      entity: 'area',
      lines: [AREA(A2, 'Town again')],
      timestamp: t11,
    });
    const before = feed.requests.length;
    report = await syncOnce(ctx);
    expect(await statusOf(11, 'area')).toBe('NO_CHANGES');
    expect(report.completed).toContain(11);
    // The 404 that settled it was asked after packet 12's dump was seen.
    const paths = feed.requests.slice(before).map((r) => r.path);
    expect(paths.lastIndexOf('/api/musicbrainz/json-dumps/json-dump-11/area.tar.xz')).toBeGreaterThan(
      paths.indexOf('/api/musicbrainz/json-dumps/json-dump-12/area.tar.xz'),
    );
    // Packet 12 itself is newest: its missing artist dump stays PENDING, and the mark stops at 11.
    expect(await statusOf(12, 'artist')).toBe('PENDING');
    expect(await latestMark()).toBe('{"from":10,"number":11}');
    const settled = await db.rows(
      'SELECT packet, entity, settled_by FROM dumps WHERE status = ? ORDER BY packet',
      'NO_CHANGES',
    );
    expect(settled).toEqual([{ packet: 11, entity: 'area', settled_by: 'LATER_DUMP' }]);
  });

  it('settles by TIMESTAMP age without a later packet', async () => {
    const old = pgTimestamp(new Date(clock.getTime() - 3 * 3_600_000));
    await writeJsonDump(feedDir.dir, {
      packet: 20,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: old,
    });
    const report = await syncOnce(ctx, { from: 20 });
    expect(await statusOf(20, 'area')).toBe('NO_CHANGES');
    expect(report.completed).toEqual([20]);
  });

  it('asks again for a dump settled by time once a later dump is seen, and stores it when it came late', async () => {
    const old = pgTimestamp(new Date(clock.getTime() - 3 * 3_600_000));
    // Upstream holds hour 20 (its replication packet): the later dump's evidence counts for it.
    await writeReplicationPacket(feedDir.dir, { packet: 20, format: 'v2', rows: [] });
    await writeJsonDump(feedDir.dir, {
      packet: 20,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: old,
    });
    await syncOnce(ctx, { from: 20 });
    expect(
      await db.rows('SELECT status, settled_by FROM dumps WHERE packet = 20 AND entity = ?', 'area'),
    ).toEqual([{ status: 'NO_CHANGES', settled_by: 'TIME' }]);

    // Upstream publishes 20's area dump late, then packet 21's: the evidence that asks 20 again.
    await writeJsonDump(feedDir.dir, {
      packet: 20,
      entity: 'area',
      lines: [AREA(A2, 'Late town')],
      timestamp: old,
    });
    await writeJsonDump(feedDir.dir, {
      packet: 21,
      entity: 'artist',
      lines: [ARTIST(A1, 'Two')],
      timestamp: old,
    });
    const report = await syncOnce(ctx);
    expect(await statusOf(20, 'area')).toBe('SYNCED');
    // Complete all along, 20 no longer holds the change stream: announced again (packetSynced).
    expect(report.reannounced).toEqual([20]);
    expect(await db.rows('SELECT mbid, data FROM changes WHERE packet = 20 AND entity = ?', 'area')).toEqual([
      { mbid: A2, data: AREA(A2, 'Late town') },
    ]);
  });

  it('never declares NO_CHANGES for a packet with no evidence at all', async () => {
    // Packet 30 changed nothing: upstream holds only its replication packet.
    await writeReplicationPacket(feedDir.dir, { packet: 30, format: 'v2', rows: [] });
    await writeJsonDump(feedDir.dir, {
      packet: 31,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: pgTimestamp(clock),
    });
    await syncOnce(ctx, { from: 30 });
    // Packet 30 has no JSON dump and 31 is fresh, but 31's dump is evidence that 30 is settled.
    expect(await statusOf(30, 'area')).toBe('NO_CHANGES');
    expect(await statusOf(31, 'area')).toBe('PENDING');
    expect(await statusOf(31, 'artist')).toBe('SYNCED');
  });
});

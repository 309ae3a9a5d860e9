import { afterEach, beforeEach, expect, it } from 'vitest';
import type { EntityType } from '../../../src/feed/entities.js';
import { jsonDumpPath } from '../../../src/feed/protocol/urls.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncContext } from '../../../src/sync/context.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { pgTimestamp, writeJsonDump } from '../../support/archives.js';
import { syncContextOn, tempDir } from '../../support/harness.js';
import { writeReplicationPacket } from '../../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';

/**
 * A JSON dump settled by `--settle-after` alone whose recheck fails, on both stores: its packet is
 * incomplete again in the very transaction that records the failure, so no reader sees the packet
 * complete with a FAILED dump (the change stream's frontier never passes it), and a crash right
 * after that commit loses nothing: the next pass asks for the dump again.
 */

const ARTIST = (id: string, name: string) => JSON.stringify({ id, name, 'sort-name': name, type: 'Person' });
const AREA = (id: string, name: string) => JSON.stringify({ id, name, type: 'City' });
const A1 = '00000000-0000-4000-8000-000000000001';
const A2 = '00000000-0000-4000-8000-000000000002';
const LATE = jsonDumpPath(20, 'area');

describeStores('a dump settled by time whose recheck fails', (stores) => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase;
  const contexts: SyncContext[] = [];
  const clock = new Date('2026-11-22T12:00:00Z');
  const old = pgTimestamp(new Date(clock.getTime() - 3 * 3_600_000));
  const context = async (store: SyncStore = db.store) => {
    const ctx = await syncContextOn(store, {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      now: () => clock,
    });
    contexts.push(ctx);
    return ctx;
  };
  /**
   * Publishes a JSON dump of one line, its packet three hours old (past the tests' --settle-after),
   * and the packet's replication packet: upstream holds the hour (sync/hourHeld.ts).
   */
  const dump = async (packet: number, entity: EntityType, line: string) => {
    if (!held.has(packet)) await writeReplicationPacket(feedDir.dir, { packet, format: 'v2', rows: [] });
    held.add(packet);
    return writeJsonDump(feedDir.dir, { packet, entity, lines: [line], timestamp: old });
  };
  const held = new Set<number>();
  const statusOf = async (packet: number, entity: string) =>
    (
      await db.rows<{ status: string }>(
        'SELECT status FROM dumps WHERE packet = ? AND entity = ?',
        packet,
        entity,
      )
    )[0]?.status;
  const complete = async (packet: number) =>
    (
      await db.rows<{ c: number }>('SELECT synced_at IS NOT NULL AS c FROM packets WHERE number = ?', packet)
    )[0]?.c;

  beforeEach(async () => {
    held.clear();
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    feed = await startSampleFeed({ root: feedDir.dir });
    db = await stores.create(dataDir.dir);
  }, 30_000);
  afterEach(async () => {
    for (const ctx of contexts.splice(0)) await ctx.feed.client.close();
    await db.close();
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  it('reopens the packet in the transaction that records the failure; a crash after it loses nothing', async () => {
    await dump(19, 'artist', ARTIST(A1, 'One'));
    await dump(19, 'area', AREA(A2, 'Town'));
    await dump(20, 'artist', ARTIST(A1, 'Two'));
    expect((await syncOnce(await context(), { from: 19 })).completed).toEqual([19, 20]);
    expect(
      await db.rows('SELECT status, settled_by FROM dumps WHERE packet = 20 AND entity = ?', 'area'),
    ).toEqual([{ status: 'NO_CHANGES', settled_by: 'TIME' }]);
    expect(await db.reads.feedFrontier()).toBe(19);

    // 20's area dump turns up late, then packet 21's dump (the evidence that asks for it again);
    // the recheck answers 503, and the sync stops right after recording it (a crash).
    await dump(20, 'area', AREA(A2, 'Late'));
    await dump(21, 'artist', ARTIST(A1, 'Three'));
    feed.faults.add({ path: LATE, fault: { kind: 'status', status: 503 }, times: Infinity });
    const seen: unknown[] = [];
    const crashing: SyncStore = {
      ...db.store,
      async recordFailure(file, reason, now, error) {
        const record = await db.store.recordFailure(file, reason, now, error);
        if (file.packet !== 20) return record;
        seen.push({
          status: await statusOf(20, 'area'),
          complete: await complete(20),
          frontier: await db.reads.feedFrontier(),
        });
        throw new Error('crash after the failure was recorded');
      },
    };
    await expect(syncOnce(await context(crashing))).rejects.toThrow('crash after the failure was recorded');
    // What any reader saw once the failure was committed: the packet incomplete, the stream before it.
    expect(seen).toEqual([{ status: 'FAILED', complete: 0, frontier: 19 }]);
    expect(await db.rows("SELECT value FROM meta WHERE key = 'latest_packet'")).toEqual([
      { value: '{"from":19,"number":19}' },
    ]);

    // The restarted sync asks for it again and stores it.
    feed.faults.clear();
    feed.requests.length = 0;
    const report = await syncOnce(await context());
    expect(feed.requests.filter((r) => r.path.endsWith(LATE)).length).toBe(1);
    expect(report.problems).toEqual([]);
    expect(await statusOf(20, 'area')).toBe('SYNCED');
    expect(await db.rows('SELECT mbid, data FROM changes WHERE packet = 20 AND entity = ?', 'area')).toEqual([
      { mbid: A2, data: AREA(A2, 'Late') },
    ]);
    expect(report.completed).toContain(20);
    expect(await complete(20)).toBe(1);
    // The normal path: the stream never served packet 20, so storing it late rewrote nothing
    // (db/feedRewrites.ts) and no cursor changes its epoch.
    expect(await db.rows("SELECT value FROM meta WHERE key = 'feed_rewrites'")).toEqual([]);
  }, 60_000);

  it('a recheck answered 404 settles the dump on the evidence in one write: never PENDING on a complete packet', async () => {
    await dump(19, 'artist', ARTIST(A1, 'One'));
    await dump(19, 'area', AREA(A2, 'Town'));
    await dump(20, 'artist', ARTIST(A1, 'Two'));
    await syncOnce(await context(), { from: 19 });
    expect(await db.reads.feedFrontier()).toBe(19);
    await dump(21, 'artist', ARTIST(A1, 'Three'));
    const seen: unknown[] = [];
    const watching: SyncStore = {
      ...db.store,
      async markPending(packet, entity, now) {
        await db.store.markPending(packet, entity, now);
        if (packet === 20) seen.push({ status: await statusOf(20, 'area'), complete: await complete(20) });
      },
    };
    feed.requests.length = 0;
    const report = await syncOnce(await context(watching));
    expect(feed.requests.filter((r) => r.path.endsWith(LATE)).length).toBe(1);
    expect(seen).toEqual([]);
    expect(
      await db.rows('SELECT status, settled_by FROM dumps WHERE packet = 20 AND entity = ?', 'area'),
    ).toEqual([{ status: 'NO_CHANGES', settled_by: 'LATER_DUMP' }]);
    expect(await complete(20)).toBe(1);
    expect(report.reannounced).toEqual([20]);
  }, 60_000);
});

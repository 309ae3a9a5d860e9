import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { EntityType } from '../../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncContext } from '../../../src/sync/context.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { syncContextOn, tempDir } from '../../support/harness.js';
import { artistRow, writeReplicationPacket } from '../../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';
import { writeSyntheticFeed } from '../../support/syntheticFeed.js';

/**
 * A sync with replication packets on both stores (issue 17; the body of
 * test/sync/replicationRetry.test.ts): a packet that replication-info lists but the feed lacks is
 * PENDING and asked again, MISSING only after an hour with a later packet stored, and stored once it
 * appears; a failing one gets attempts and a next retry time, and follow mode waits for it.
 */

const ENTITIES: EntityType[] = ['area'];
const MISSING = 'replication-600-v2.tar.bz2';
const PRESENT = 'replication-601-v2.tar.bz2';
const GID = '6a4b8a0c-0000-4000-8000-000000000001';
const GID2 = '6a4b8a0c-0000-4000-8000-000000000002';

/** A fresh feed per run: the test adds packet 600's archive to it. */
async function startFeed(root: string): Promise<SampleFeed> {
  await writeSyntheticFeed(root, { firstPacket: 600, packets: 2, entities: ENTITIES, linesPerDump: 5 });
  await writeReplicationPacket(root, {
    packet: 601,
    format: 'v2',
    rows: [
      { xid: 1, table: 'musicbrainz.artist', op: 'i', newData: artistRow({ id: 1, gid: GID, name: 'A' }) },
    ],
  });
  return startSampleFeed({ root });
}

describeStores('replication packets that fail, in a sync', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase;
  let ctx: SyncContext;
  const status = async (packet: number) =>
    (await db.rows<{ status: string }>('SELECT status FROM replication_packets WHERE packet = ?', packet))[0]
      ?.status;

  afterEach(async () => {
    await feed?.close();
    await ctx?.feed.client.close();
    await db?.close();
    await data?.cleanup();
  });

  it('a 404 is PENDING (asked again), MISSING only after an hour with a later packet stored, SYNCED once served', async () => {
    data = await tempDir('lf-store-repl-');
    feed = await startFeed(join(data.dir, 'feed'));
    db = await stores.create(data.dir);
    let clock = new Date();
    ctx = {
      ...(await syncContextOn(db.store, {
        feedRoot: feed.feedRoot,
        dataDir: data.dir,
        entities: ENTITIES,
        replicationPackets: true,
      })),
      now: () => clock,
    };
    feed.faults.add({ path: PRESENT, fault: { kind: 'status', status: 503 }, times: Infinity });
    const report = await syncOnce(ctx, { from: 600 });
    expect(report.problems.map((p) => [p.packet, p.reason])).toEqual([
      [601, expect.stringContaining('HTTP 503')],
    ]);
    const failures = await db.rows<{
      packet: number;
      status: string;
      attempts: number;
      error: string;
      next: string;
    }>(
      'SELECT packet, status, attempts, error, next_retry_at AS next FROM replication_packets ORDER BY packet',
    );
    expect(failures).toEqual([
      {
        packet: 600,
        status: 'PENDING',
        attempts: 1,
        error: expect.stringContaining(`${MISSING} is not on the feed`),
        next: expect.any(String),
      },
      {
        packet: 601,
        status: 'FAILED',
        attempts: 1,
        error: expect.stringContaining('HTTP 503'),
        next: expect.any(String),
      },
    ]);
    for (const row of failures) expect(Date.parse(row.next)).toBeGreaterThan(clock.getTime());
    // Follow mode waits for the next retry time of both.
    feed.requests.length = 0;
    const deferred = await syncOnce({ ...ctx, policy: { ...ctx.policy, deferFailed: true } }, { from: 600 });
    expect(deferred.deferred).toBe(2);
    expect(feed.requests.filter((r) => r.path.includes('replication-6'))).toEqual([]);
    // Two hours of 404s, but packet 601 is still not there: never MISSING, still asked.
    clock = new Date(clock.getTime() + 2 * 3_600_000);
    feed.requests.length = 0;
    const noLater = await syncOnce(ctx, { from: 600 });
    expect(feed.requests.filter((r) => r.path.endsWith(MISSING))).toHaveLength(1);
    expect(noLater.problems.map((p) => p.packet)).toEqual([601]);
    expect(await status(600)).toBe('PENDING');
    expect(noLater.completed).toEqual([]);
    // 601 is served again and stored; in this pass 600 was asked before 601 was there: PENDING still.
    feed.faults.clear();
    expect((await syncOnce(ctx, { from: 600 })).problems).toEqual([]);
    expect(await status(600)).toBe('PENDING');
    expect(await status(601)).toBe('SYNCED');
    expect(await db.rows('SELECT packet, table_name, op FROM row_changes ORDER BY packet, ord')).toEqual([
      { packet: 601, table_name: 'musicbrainz.artist', op: 'i' },
    ]);
    // Still 404 after more than an hour, with 601 stored: MISSING, reported, and the packet completes.
    clock = new Date(clock.getTime() + 60_000);
    const late = await syncOnce(ctx, { from: 600 });
    expect(late.problems.map((p) => p.packet)).toEqual([600]);
    expect(await status(600)).toBe('MISSING');
    expect(late.completed).toContain(600);
    // Still asked on every pass (here past its range) and stored once the feed has it.
    await writeReplicationPacket(join(data.dir, 'feed'), {
      packet: 600,
      format: 'v2',
      rows: [
        { xid: 1, table: 'musicbrainz.artist', op: 'i', newData: artistRow({ id: 2, gid: GID2, name: 'B' }) },
      ],
    });
    feed.requests.length = 0;
    const found = await syncOnce(ctx, { from: 601 });
    expect(feed.requests.filter((r) => r.path.endsWith(MISSING))).toHaveLength(1);
    expect(found.problems).toEqual([]);
    expect(await status(600)).toBe('SYNCED');
    expect(await db.rows("SELECT value FROM meta WHERE key = 'latest_packet'")).toEqual([
      { value: '{"from":600,"number":601}' },
    ]);
  }, 60_000);
});

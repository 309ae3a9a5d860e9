import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { EntityType } from '../../src/feed/entities.js';
import { createApp } from '../../src/http/app.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { gql, syncContextOn, tempDir, testLogger, testService } from '../support/harness.js';
import { artistRow, writeReplicationPacket } from '../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { writeSyntheticFeed } from '../support/syntheticFeed.js';

/**
 * Issue 5 and 11 for replication packets: a packet that replication-info lists but the feed lacks
 * is PENDING and asked again, MISSING only after an hour with a later packet there, and stored once
 * it appears; a failing one gets attempts and a next retry time; a corrupted transfer is downloaded again.
 * On both stores (issue 17).
 */

const ENTITIES: EntityType[] = ['area'];
const MISSING = 'replication-600-v2.tar.bz2';
const PRESENT = 'replication-601-v2.tar.bz2';
const GID = '6a4b8a0c-0000-4000-8000-000000000001';
const GID2 = '6a4b8a0c-0000-4000-8000-000000000002';

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;

beforeAll(async () => {
  work = await tempDir('lf-replretry-');
  const root = join(work.dir, 'feed');
  await writeSyntheticFeed(root, { firstPacket: 600, packets: 2, entities: ENTITIES, linesPerDump: 5 });
  await writeReplicationPacket(root, {
    packet: 601,
    format: 'v2',
    rows: [
      { xid: 1, table: 'musicbrainz.artist', op: 'i', newData: artistRow({ id: 1, gid: GID, name: 'A' }) },
    ],
  });
  feed = await startSampleFeed({ root });
}, 60_000);

afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

describeStores('replication packets that fail', (stores) => {
  let db: TestDatabase | undefined;
  let opened: SyncContext | undefined;
  afterEach(async () => {
    feed.faults.clear();
    feed.requests.length = 0;
    await opened?.feed.client.close();
    await db?.close();
    [opened, db] = [undefined, undefined];
  });

  const status = async (packet: number) =>
    (
      await db!.rows<{ status: string }>('SELECT status FROM replication_packets WHERE packet = ?', packet)
    )[0]!.status;

  /** A sync context over a new database of this store in `work/<name>`; closed after the test. */
  async function context(name: string, logs?: string[]): Promise<SyncContext> {
    const dataDir = join(work.dir, `${name}-${stores.kind}`);
    db = await stores.create(dataDir);
    opened = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir,
      entities: ENTITIES,
      replicationPackets: true,
      logger: testLogger(logs),
    });
    return opened;
  }

  it('a 404 is PENDING (asked again), MISSING only after an hour with a later packet stored, SYNCED once served', async () => {
    feed.faults.add({ path: PRESENT, fault: { kind: 'status', status: 503 }, times: Infinity });
    const ctx = await context('failing');
    let late600: string | undefined;
    let clock = new Date();
    const timed = { ...ctx, now: () => clock };
    try {
      const report = await syncOnce(timed, { from: 600 });
      // The 404 is not a problem yet: the packet may not be copied (README, How a sync works).
      expect(report.problems.map((p) => [p.packet, p.reason])).toEqual([
        [601, expect.stringContaining('HTTP 503')],
      ]);
      const app = createApp({
        reads: db!.reads,
        display: db!.store.display,
        service: testService({ entities: ENTITIES }),
        logger: testLogger(),
        dataDir: join(work.dir, `failing-${stores.kind}`),
      });
      const answer = await gql(
        app,
        '{ failures { totalCount nodes { packet kind status attempts error nextRetryAt } } packet(number: 600) { replicationStatus replicationError } }',
      );
      expect(answer.data!.failures).toEqual({
        totalCount: 2,
        nodes: [
          expect.objectContaining({
            packet: 600,
            kind: 'REPLICATION_PACKET',
            status: 'PENDING',
            attempts: 1,
          }),
          expect.objectContaining({
            packet: 601,
            kind: 'REPLICATION_PACKET',
            status: 'FAILED',
            attempts: 1,
          }),
        ],
      });
      expect(answer.data!.packet).toEqual({
        replicationStatus: 'PENDING',
        replicationError: expect.stringContaining(`${MISSING} is not on the feed`),
      });
      for (const node of answer.data!.failures.nodes) {
        expect(Date.parse(node.nextRetryAt)).toBeGreaterThan(clock.getTime());
      }
      // Follow mode waits for the next retry time of both.
      feed.requests.length = 0;
      const deferred = await syncOnce(
        { ...timed, policy: { ...timed.policy, deferFailed: true } },
        { from: 600 },
      );
      expect(deferred.deferred).toBe(2);
      expect(feed.requests.filter((r) => r.path.includes('replication-6'))).toEqual([]);
      // Two hours of 404s, but packet 601 is still not there: never MISSING, still asked.
      clock = new Date(clock.getTime() + 2 * 3_600_000);
      feed.requests.length = 0;
      const noLater = await syncOnce(timed, { from: 600 });
      expect(feed.requests.filter((r) => r.path.endsWith(MISSING))).toHaveLength(1);
      expect(noLater.problems.map((p) => p.packet)).toEqual([601]);
      expect(await status(600)).toBe('PENDING');
      expect(noLater.completed).toEqual([]);
      // 601 is served again and stored; in this pass 600 was asked before 601 was there: PENDING still.
      feed.faults.clear();
      feed.requests.length = 0;
      expect((await syncOnce(timed, { from: 600 })).problems).toEqual([]);
      expect(feed.requests.filter((r) => r.path.endsWith(MISSING))).toHaveLength(1);
      expect(await status(600)).toBe('PENDING');
      expect(await status(601)).toBe('SYNCED');
      // Still 404 after more than an hour, with 601 stored: MISSING, reported, and the packet completes.
      clock = new Date(clock.getTime() + 60_000);
      const late = await syncOnce(timed, { from: 600 });
      expect(late.problems.map((p) => p.packet)).toEqual([600]);
      expect(await status(600)).toBe('MISSING');
      expect(late.completed).toContain(600);
      // Still asked on every pass (here past its range) and stored once the feed has it.
      late600 = await writeReplicationPacket(join(work.dir, 'feed'), {
        packet: 600,
        format: 'v2',
        rows: [
          {
            xid: 1,
            table: 'musicbrainz.artist',
            op: 'i',
            newData: artistRow({ id: 2, gid: GID2, name: 'B' }),
          },
        ],
      });
      feed.requests.length = 0;
      const found = await syncOnce(timed, { from: 601 });
      expect(feed.requests.filter((r) => r.path.endsWith(MISSING))).toHaveLength(1);
      expect(found.problems).toEqual([]);
      expect(await status(600)).toBe('SYNCED');
    } finally {
      // The next store's run starts from a feed without packet 600 again.
      if (late600) await rm(late600, { force: true });
    }
  });

  it('downloads a corrupted replication packet again', async () => {
    feed.faults.add({ path: PRESENT, fault: { kind: 'corrupt' } });
    const logs: string[] = [];
    const ctx = await context('corrupt', logs);
    const report = await syncOnce(ctx, { from: 601 });
    expect(report.problems).toEqual([]);
    expect(logs.filter((l) => l.includes('"redownload"'))).toHaveLength(1);
    expect(
      await db!.rows('SELECT status, row_count AS rows FROM replication_packets WHERE packet = 601'),
    ).toEqual([{ status: 'SYNCED', rows: 1 }]);
  });

  it('a replication packet unreadable on every download is one FAILED attempt of the pass, like a JSON dump', async () => {
    feed.faults.add({ path: PRESENT, fault: { kind: 'corrupt' }, times: Infinity });
    const logs: string[] = [];
    const ctx = await context('corrupt-always', logs);
    const report = await syncOnce(ctx, { from: 601 });
    expect(report.problems.map((p) => [p.packet, p.file])).toEqual([[601, 'replication packet 601']]);
    expect(logs.filter((l) => l.includes('"redownload"'))).toHaveLength(2);
    expect(feed.requests.filter((r) => r.path.endsWith(PRESENT))).toHaveLength(3);
    expect(
      await db!.rows(
        'SELECT status, attempts, next_retry_at IS NOT NULL AS retry FROM replication_packets WHERE packet = 601',
      ),
    ).toEqual([{ status: 'FAILED', attempts: 1, retry: 1 }]);
  });
});

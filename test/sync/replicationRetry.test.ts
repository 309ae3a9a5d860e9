import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EntityType } from '../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { gql, syncContext, tempDir, testApp, testLogger } from '../support/harness.js';
import { artistRow, writeReplicationPacket } from '../support/replicationArchives.js';
import { writeSyntheticFeed } from '../support/syntheticFeed.js';

/**
 * Issue 5 for replication packets: a packet that replication-info lists but the feed lacks is
 * reported (MISSING) and visible; a failing one gets attempts and a next retry time; a corrupted
 * transfer is downloaded again.
 */

const ENTITIES: EntityType[] = ['area'];
const MISSING = 'replication-600-v2.tar.bz2';
const PRESENT = 'replication-601-v2.tar.bz2';

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;

beforeAll(async () => {
  work = await tempDir('lf-replretry-');
  const root = join(work.dir, 'feed');
  await writeSyntheticFeed(root, { firstPacket: 600, packets: 2, entities: ENTITIES, linesPerDump: 5 });
  const gid = '6a4b8a0c-0000-4000-8000-000000000001';
  await writeReplicationPacket(root, {
    packet: 601,
    format: 'v2',
    rows: [{ xid: 1, table: 'musicbrainz.artist', op: 'i', newData: artistRow({ id: 1, gid, name: 'A' }) }],
  });
  feed = await startSampleFeed({ root });
}, 60_000);

afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

afterEach(() => {
  feed.faults.clear();
  feed.requests.length = 0;
});

async function context(name: string, logs?: string[]) {
  return syncContext({
    feedRoot: feed.feedRoot,
    dataDir: join(work.dir, name),
    entities: ENTITIES,
    replicationPackets: true,
    logger: testLogger(logs),
  });
}

describe('replication packets that fail', () => {
  it('reports a missing packet and a failing one with attempts and next retry, in GraphQL too', async () => {
    feed.faults.add({ path: PRESENT, fault: { kind: 'status', status: 503 }, times: Infinity });
    const ctx = await context('failing');
    try {
      const report = await syncOnce(ctx, { from: 600 });
      expect(report.problems.map((p) => [p.packet, p.reason])).toEqual([
        [600, expect.stringContaining(`${MISSING} is not on the feed`)],
        [601, expect.stringContaining('HTTP 503')],
      ]);
      const app = testApp(ctx.store.path, join(work.dir, 'failing'), { entities: ENTITIES });
      try {
        const answer = await gql(
          app,
          '{ failures { totalCount nodes { packet kind status attempts error nextRetryAt } } }',
        );
        expect(answer.data!.failures).toEqual({
          totalCount: 2,
          nodes: [
            expect.objectContaining({
              packet: 600,
              kind: 'REPLICATION_PACKET',
              status: 'MISSING',
              nextRetryAt: null,
            }),
            expect.objectContaining({
              packet: 601,
              kind: 'REPLICATION_PACKET',
              status: 'FAILED',
              attempts: 1,
            }),
          ],
        });
        expect(Date.parse(answer.data!.failures.nodes[1].nextRetryAt)).toBeGreaterThan(Date.now());
      } finally {
        app.store.close();
      }
      // Follow mode waits for the next retry time; the missing packet is not asked again.
      feed.requests.length = 0;
      const deferred = await syncOnce({ ...ctx, deferFailed: true }, { from: 600 });
      expect(deferred.deferred).toBe(1);
      expect(feed.requests.filter((r) => r.path.includes('replication-6'))).toEqual([]);
      // Once the feed serves it again, a pass stores it; the missing packet was reported once and
      // stays visible in `failures`.
      feed.faults.clear();
      expect((await syncOnce(ctx, { from: 600 })).problems).toEqual([]);
      const row = ctx.store.sqlite
        .prepare('SELECT status, next_retry_at AS next FROM replication_packets WHERE packet = 601')
        .get();
      expect(row).toEqual({ status: 'SYNCED', next: null });
    } finally {
      ctx.store.close();
      await ctx.client.close();
    }
  });

  it('downloads a corrupted replication packet again', async () => {
    feed.faults.add({ path: PRESENT, fault: { kind: 'corrupt' } });
    const logs: string[] = [];
    const ctx = await context('corrupt', logs);
    try {
      const report = await syncOnce(ctx, { from: 601 });
      expect(report.problems).toEqual([]);
      expect(logs.filter((l) => l.includes('"redownload"'))).toHaveLength(1);
      expect(
        ctx.store.sqlite
          .prepare('SELECT status, row_count AS rows FROM replication_packets WHERE packet = 601')
          .get(),
      ).toEqual({
        status: 'SYNCED',
        rows: 1,
      });
    } finally {
      ctx.store.close();
      await ctx.client.close();
    }
  });
});

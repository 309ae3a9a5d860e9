import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { EntityType } from '../../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncContext } from '../../../src/sync/context.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { syncContextOn, tempDir } from '../../support/harness.js';
import {
  artistRow,
  ED_SHEERAN_ROW as ED,
  writeReplicationPacket,
} from '../../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';
import { writeSyntheticFeed } from '../../support/syntheticFeed.js';

/**
 * A replication packet that stays missing is never skipped, on both stores (FEED.md, Errors:
 * upstream's consumers never skip a packet): a MISSING packet whose recheck fails otherwise than
 * with a 404 (an HTTP 503) stays MISSING and holds the change stream, later passes ask for it
 * again, and its removals are stored once it appears. A replication packet left FAILED or PENDING on
 * a complete packet (by an earlier version, or a `--from` pass over packets synced without
 * replication packets) is asked for again and holds the stream too.
 */

const ENTITIES: EntityType[] = ['area'];
const MISSING = 'replication-600-v2.tar.bz2';
const GID = '6a4b8a0c-0000-4000-8000-000000000001';
const HOUR = 3_600_000;

describeStores('a MISSING replication packet whose recheck fails', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase;
  let clock: Date;
  const contexts: SyncContext[] = [];
  const status = async (packet: number) =>
    (await db.rows<{ status: string }>('SELECT status FROM replication_packets WHERE packet = ?', packet))[0]
      ?.status;
  const asked = () => feed.requests.filter((r) => r.path.endsWith(MISSING)).length;
  const frontier = async () => db.reads.feedFrontier();
  async function context(replicationPackets = true): Promise<SyncContext> {
    const ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      entities: ENTITIES,
      replicationPackets,
      now: () => clock,
    });
    contexts.push(ctx);
    return ctx;
  }
  /** Two passes an hour apart: 600 answers 404 (PENDING), then is MISSING with 601 stored; 600 completes. */
  async function missing600(ctx: SyncContext): Promise<void> {
    await syncOnce(ctx, { from: 600 });
    expect(await status(600)).toBe('PENDING');
    clock = new Date(clock.getTime() + HOUR + 60_000);
    expect((await syncOnce(ctx)).completed).toEqual([600]);
    expect(await status(600)).toBe('MISSING');
    expect(await frontier()).toBe(599);
  }

  beforeEach(async () => {
    data = await tempDir('lf-store-recheck-');
    const root = join(data.dir, 'feed');
    await writeSyntheticFeed(root, { firstPacket: 600, packets: 2, entities: ENTITIES, linesPerDump: 5 });
    await writeReplicationPacket(root, {
      packet: 601,
      format: 'v2',
      rows: [
        { xid: 1, table: 'musicbrainz.artist', op: 'i', newData: artistRow({ id: 1, gid: GID, name: 'A' }) },
      ],
    });
    feed = await startSampleFeed({ root });
    db = await stores.create(data.dir);
    clock = new Date();
  }, 30_000);

  afterEach(async () => {
    for (const ctx of contexts.splice(0)) await ctx.feed.client.close();
    await feed.close();
    await db.close();
    await data.cleanup();
  });

  it('stays MISSING on an HTTP 503, holds the stream, is asked again and stored with its removals', async () => {
    const ctx = await context();
    await missing600(ctx);

    feed.faults.add({ path: MISSING, fault: { kind: 'status', status: 503 }, times: Infinity });
    feed.requests.length = 0;
    const failed = await syncOnce(ctx);
    expect(asked()).toBeGreaterThan(0);
    expect(failed.problems.map((p) => [p.packet, p.reason])).toEqual([
      [600, expect.stringContaining('HTTP 503')],
    ]);
    const [row] = await db.rows<{ status: string; error: string; next: string }>(
      'SELECT status, error, next_retry_at AS next FROM replication_packets WHERE packet = 600',
    );
    expect(row).toEqual({
      status: 'MISSING',
      error: expect.stringContaining('HTTP 503'),
      next: expect.any(String),
    });
    expect(Date.parse(row!.next)).toBeGreaterThan(clock.getTime());
    // The change stream still stops before it, and follow mode waits for its retry time.
    expect(await frontier()).toBe(599);
    feed.requests.length = 0;
    const deferred = await syncOnce({ ...ctx, policy: { ...ctx.policy, deferFailed: true } });
    expect([deferred.deferred, asked()]).toEqual([1, 0]);

    // Later passes ask for it again: still a 404, still MISSING.
    feed.faults.clear();
    const again = await syncOnce(ctx);
    expect(asked()).toBe(1);
    expect(again.problems.map((p) => p.packet)).toEqual([600]);
    expect(await status(600)).toBe('MISSING');
    expect(await frontier()).toBe(599);

    // Upstream publishes it: stored with its deletion, and the stream moves past it.
    await writeReplicationPacket(join(data.dir, 'feed'), {
      packet: 600,
      format: 'v2',
      rows: [{ xid: 1, table: 'musicbrainz.artist', op: 'd', oldData: ED }],
    });
    expect((await syncOnce(ctx)).problems).toEqual([]);
    expect(await status(600)).toBe('SYNCED');
    expect(await db.rows('SELECT mbid, packet, kind FROM removals ORDER BY packet, mbid')).toEqual([
      { mbid: ED.gid, packet: 600, kind: 'DELETED' },
    ]);
    expect(await frontier()).toBe(601);
  }, 60_000);

  it('asks again for a replication packet left FAILED on a complete packet, which holds the stream once MISSING', async () => {
    const ctx = await context();
    await missing600(ctx);
    // What an earlier version left after a failed recheck: FAILED, its packet complete.
    await db.rows("UPDATE replication_packets SET status = 'FAILED' WHERE packet = 600");
    expect(await frontier()).toBe(601);

    feed.requests.length = 0;
    await syncOnce(ctx);
    expect(asked()).toBe(1);
    expect(await status(600)).toBe('MISSING');
    expect(await frontier()).toBe(599);
  }, 60_000);

  it('a --from pass over packets synced without replication packets: a 404 is PENDING and reopens its packet', async () => {
    expect((await syncOnce(await context(false), { from: 600 })).completed).toEqual([600, 601]);
    expect(await frontier()).toBe(601);

    const ctx = await context();
    feed.requests.length = 0;
    await syncOnce(ctx, { from: 600 });
    expect(asked()).toBe(1);
    expect(await status(600)).toBe('PENDING');
    expect(await status(601)).toBe('SYNCED');
    expect(
      await db.rows('SELECT number, synced_at IS NOT NULL AS complete FROM packets ORDER BY number'),
    ).toEqual([
      { number: 600, complete: 0 },
      { number: 601, complete: 1 },
    ]);
    expect(await frontier()).toBeUndefined();

    // Asked again by the next passes from there; MISSING after an hour, and the stream waits on it.
    clock = new Date(clock.getTime() + HOUR + 60_000);
    feed.requests.length = 0;
    expect((await syncOnce(ctx)).completed).toEqual([600]);
    expect(asked()).toBe(1);
    expect(await status(600)).toBe('MISSING');
    expect(await frontier()).toBe(599);
  }, 60_000);
});

import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { EntityType } from '../../../src/feed/entities.js';
import { createPacketEvents } from '../../../src/ops/events.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncContext } from '../../../src/sync/context.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { syncContextOn, tempDir } from '../../support/harness.js';
import { watchOf } from '../../support/packetWatch.js';
import { ED_SHEERAN_ROW as ED, writeReplicationPacket } from '../../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';
import { writeSyntheticFeed } from '../../support/syntheticFeed.js';

/**
 * A complete packet whose MISSING replication packet is stored at last no longer holds the change
 * stream: it is announced again (`packetSynced`), by the sync in its own process and by the watch
 * of a `serve` (SQLite's polling of `synced_at`, PostgreSQL's LISTEN), so that `entityChanged`
 * followers get the packets it held back then, not when the next packet completes.
 */

const ENTITIES: EntityType[] = ['area'];
const HOUR = 3_600_000;

describeStores('a complete packet announced again when what held the stream at it is stored', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase;
  let ctx: SyncContext;
  let clock: Date;
  const announced: number[] = [];

  beforeEach(async () => {
    data = await tempDir('lf-store-reannounce-');
    await writeSyntheticFeed(join(data.dir, 'feed'), {
      firstPacket: 600,
      packets: 2,
      entities: ENTITIES,
      linesPerDump: 3,
    });
    await writeReplicationPacket(join(data.dir, 'feed'), { packet: 601, format: 'v2', rows: [] });
    feed = await startSampleFeed({ root: join(data.dir, 'feed') });
    db = await stores.create(data.dir);
    clock = new Date();
    const base = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      entities: ENTITIES,
      replicationPackets: true,
      now: () => clock,
    });
    announced.length = 0;
    ctx = { ...base, observe: { ...base.observe, onPacketSynced: (packet) => announced.push(packet) } };
  }, 30_000);

  afterEach(async () => {
    await ctx.feed.client.close();
    await feed.close();
    await db.close();
    await data.cleanup();
  });

  it("announces the packet whose MISSING replication packet is stored, once, in process and to a serve's watch", async () => {
    await syncOnce(ctx, { from: 600 });
    clock = new Date(clock.getTime() + HOUR + 60_000);
    await syncOnce(ctx);
    expect(announced).toEqual([601, 600]);
    expect(await db.reads.feedFrontier()).toBe(599);
    const [before] = await db.rows<{ at: string }>('SELECT synced_at AS at FROM packets WHERE number = 600');

    const events = createPacketEvents();
    const watched: number[] = [];
    const stop = await watchOf(stores.kind, db, events);
    const subscription = events.subscribe('packetSynced');
    const reading = (async () => {
      for await (const packet of subscription) watched.push(packet);
    })();
    try {
      await writeReplicationPacket(join(data.dir, 'feed'), {
        packet: 600,
        format: 'v2',
        rows: [{ xid: 1, table: 'musicbrainz.artist', op: 'd', oldData: ED }],
      });
      clock = new Date(clock.getTime() + 60_000);
      announced.length = 0;
      const report = await syncOnce(ctx);
      expect([report.reannounced, report.completed, announced]).toEqual([[600], [], [600]]);
      expect(await db.reads.feedFrontier()).toBe(601);
      const [after] = await db.rows<{ at: string }>('SELECT synced_at AS at FROM packets WHERE number = 600');
      expect(after!.at > before!.at).toBe(true);
      await expect.poll(() => watched, { timeout: 5_000 }).toEqual([600]);

      // Nothing new: nothing announced again.
      announced.length = 0;
      expect((await syncOnce(ctx)).reannounced).toEqual([]);
      expect(announced).toEqual([]);
    } finally {
      await subscription.return?.();
      await reading;
      await stop();
    }
  }, 60_000);
});

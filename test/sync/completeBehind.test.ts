import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { describeStores } from '../support/stores.js';

/**
 * A pass completes each packet as soon as it can (src/sync/completeBehind.ts), not when it ends: a
 * long catch-up shows readers, the change stream and webhooks its packets one by one, and a pass
 * stopped midway leaves the packets it finished complete. On the bundled feed, whose packets lack
 * some JSON dumps (settled on a later packet's dump), over both stores.
 */

const { firstPacket, lastPacket } = readBundledManifest();

describeStores('a pass completes packets as it goes', (stores) => {
  let feed: SampleFeed;
  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  });
  afterAll(async () => {
    await feed?.close();
  });

  async function run(stopAfter?: number) {
    const data = await tempDir();
    const db = await stores.create(data.dir);
    const abort = new AbortController();
    const ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      replicationPackets: true,
      signal: abort.signal,
    });
    const complete = async () =>
      (
        await db.rows<{ number: number }>(
          'SELECT number FROM packets WHERE synced_at IS NOT NULL ORDER BY number',
        )
      ).map((row) => Number(row.number));
    const announced: number[] = [];
    const completeAfter = new Map<number, number[]>();
    ctx.observe.onPacketSynced = (packet) => announced.push(packet);
    ctx.observe.observer = {
      packetVisited: (packet) => {
        if (packet === stopAfter) abort.abort(new Error('stopped by the test'));
      },
    };
    const visits: Promise<void>[] = [];
    const visited = ctx.observe.observer.packetVisited!;
    ctx.observe.observer.packetVisited = (packet) => {
      visits.push(complete().then((numbers) => void completeAfter.set(packet, numbers)));
      visited(packet);
    };
    const outcome = await syncOnce(ctx, { from: firstPacket }).then(
      (report) => ({ report }),
      (error: unknown) => ({ error }),
    );
    await Promise.all(visits);
    const finalComplete = await complete();
    await ctx.feed.client.close();
    await db.close();
    await data.cleanup();
    return { outcome, announced, completeAfter, finalComplete };
  }

  it('completes each packet once it can while the pass goes on, and announces each once', async () => {
    const { outcome, announced, completeAfter, finalComplete } = await run();
    expect('report' in outcome && outcome.report.problems).toEqual([]);
    // Every packet completes (the newest settles by time here: the fixtures are months old).
    expect(finalComplete).toEqual(
      Array.from({ length: lastPacket - firstPacket + 1 }, (_, i) => firstPacket + i),
    );
    // Before the pass's last packet was done, every earlier one was complete (a packet without some
    // JSON dumps as soon as a later packet's dump was stored), and none went back.
    expect(completeAfter.get(lastPacket)).toEqual(expect.arrayContaining(finalComplete.slice(0, -1)));
    let seen: number[] = [];
    for (let packet = firstPacket; packet <= lastPacket; packet++) {
      const now = completeAfter.get(packet)!;
      expect(now, `after packet ${packet}`).toEqual(expect.arrayContaining(seen));
      seen = now;
    }
    expect(completeAfter.get(firstPacket + 5)!.length).toBeGreaterThan(0);
    expect([...announced].sort((a, b) => a - b)).toEqual(finalComplete);
  }, 60_000);

  it('leaves the packets before where a pass stopped complete', async () => {
    const stopAfter = firstPacket + 10;
    const { outcome, announced, finalComplete } = await run(stopAfter);
    expect('error' in outcome).toBe(true);
    expect(finalComplete).toEqual(
      expect.arrayContaining(Array.from({ length: 10 }, (_, i) => firstPacket + i)),
    );
    expect(finalComplete.every((number) => number <= stopAfter)).toBe(true);
    expect([...announced].sort((a, b) => a - b)).toEqual(finalComplete);
  }, 60_000);
});

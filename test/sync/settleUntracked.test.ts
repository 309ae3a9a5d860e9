import { afterEach, beforeEach, expect, it } from 'vitest';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { writeJsonDump } from '../support/archives.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import { writeReplicationPacket } from '../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { createTestKeyHome, signFile, type TestKeyHome } from '../support/testKeys.js';

/**
 * README, How a sync works: a 404 settles as "no changes" once a JSON dump of a later packet has
 * been seen, of ANY entity type. A sync that tracks one seldom-changing type (`--entities area`)
 * downloads none of the others, so it looks for that evidence upstream (sync/evidence.ts): without
 * it, every packet would wait for the next area dump, days away. On both stores.
 */

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describeStores('settling when only some entity types are tracked', (stores) => {
  let db: TestDatabase | undefined;
  let ctx: SyncContext | undefined;
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let keyHome: TestKeyHome;

  /** A dump as upstream publishes it, with its signature (the probe asks for signatures only). */
  async function publish(packet: number, entity: 'area' | 'artist'): Promise<void> {
    const lines = [JSON.stringify({ id: id(packet), name: `${entity} ${packet}` })];
    const built = await writeJsonDump(feedDir.dir, { packet, entity, lines });
    await signFile(built.path, keyHome, { fingerprint: keyHome.fingerprint });
  }

  beforeEach(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    keyHome = await createTestKeyHome();
    // replication-info lists packet 43; the sync does not fetch replication packets here.
    for (let packet = 40; packet <= 43; packet++)
      await writeReplicationPacket(feedDir.dir, { packet, format: 'v2', rows: [] });
    await publish(40, 'area');
    feed = await startSampleFeed({ root: feedDir.dir });
  });
  afterEach(async () => {
    await ctx?.feed.client.close();
    await db?.close();
    [ctx, db] = [undefined, undefined];
    await feed.close();
    await keyHome.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  async function context(): Promise<SyncContext> {
    db = await stores.create(dataDir.dir);
    const base = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area'],
    });
    // Only a later packet's JSON dump settles a 404 here, never the clock.
    ctx = { ...base, policy: { ...base.policy, settleAfterMs: null } };
    return ctx;
  }

  async function areaStatuses(): Promise<[number, string][]> {
    const rows = await db!.rows<{ packet: number; status: string }>(
      "SELECT packet, status FROM dumps WHERE entity = 'area' ORDER BY packet",
    );
    return rows.map((r) => [r.packet, r.status]);
  }

  const untrackedAsked = () =>
    feed.requests
      .map((r) => r.path.slice(r.path.indexOf('json-dumps/')))
      .filter((path) => path.startsWith('json-dumps/') && !path.includes('/area.'));

  it("another type's later dumps settle the tracked type's 404s; the newest packet waits", async () => {
    for (const packet of [41, 42, 43]) await publish(packet, 'artist');
    const report = await syncOnce(await context(), { from: 40 });
    expect(await areaStatuses()).toEqual([
      [40, 'SYNCED'],
      [41, 'NO_CHANGES'],
      [42, 'NO_CHANGES'],
      [43, 'PENDING'],
    ]);
    expect(report.completed).toEqual([40, 41, 42]);
    const settledBy = await db!.rows<{ by: string }>(
      "SELECT DISTINCT settled_by AS by FROM dumps WHERE status = 'NO_CHANGES'",
    );
    expect(settledBy).toEqual([{ by: 'LATER_DUMP' }]);
    // Only signatures were asked for, never an archive of a type not tracked; one probe found
    // packet 42's artist dump, which settles 41 as well (recording, release first: they 404 here).
    const asked = untrackedAsked();
    expect(asked.every((path) => path.endsWith('.tar.xz.asc'))).toBe(true);
    expect(asked).toContain('json-dumps/json-dump-42/artist.tar.xz.asc');
    expect(asked.length).toBeLessThanOrEqual(6);
  });

  it('while upstream publishes no later dump at all, nothing settles and the probe stays small', async () => {
    const report = await syncOnce(await context(), { from: 40 });
    expect(await areaStatuses()).toEqual([
      [40, 'SYNCED'],
      [41, 'PENDING'],
      [42, 'PENDING'],
      [43, 'PENDING'],
    ]);
    expect(report.completed).toEqual([40]);
    // For packet 41 (40's area is stored): the packets after it up to the latest, 42 and 43, four
    // untracked types each; then no more, since upstream publishes dumps in packet order.
    expect(untrackedAsked()).toHaveLength(8);

    // The dump job resumes: the next pass finds packet 42's artist dump and settles 41.
    await publish(42, 'artist');
    const after = await syncOnce(ctx!);
    expect(await areaStatuses()).toEqual([
      [40, 'SYNCED'],
      [41, 'NO_CHANGES'],
      [42, 'PENDING'],
      [43, 'PENDING'],
    ]);
    expect(after.completed).toEqual([41]);
  });
});

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { EntityType } from '../../../src/feed/entities.js';
import { jsonDumpPath } from '../../../src/feed/protocol/urls.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncContext } from '../../../src/sync/context.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { syncContextOn, tempDir } from '../../support/harness.js';
import { describeStores, SQLITE_STORES, snapshotStore, type TestDatabase } from '../../support/stores.js';
import { writeSyntheticFeed } from '../../support/syntheticFeed.js';

/**
 * A file that fails half way through its store leaves nothing of it visible, on both stores; the
 * next pass stores it, and the database then equals, row for row, a clean sync into SQLite (the
 * same feed, the same rows, on PostgreSQL too). Kept archives follow `--keep-files` on both.
 */

const ENTITIES: EntityType[] = ['artist', 'label'];
const FIRST = 500;
const DUMP = jsonDumpPath(501, 'artist');

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;
/** A clean sync into SQLite: what every store must end with. */
let reference: Record<string, unknown>;

beforeAll(async () => {
  work = await tempDir('lf-store-faults-');
  const root = join(work.dir, 'feed');
  await writeSyntheticFeed(root, {
    firstPacket: FIRST,
    packets: 4,
    entities: ENTITIES,
    linesPerDump: 3000,
    malformedEvery: 97,
    emptyPackets: [502],
    heldHours: true,
  });
  feed = await startSampleFeed({ root });
  const dataDir = join(work.dir, 'reference');
  const db = await SQLITE_STORES.create(dataDir);
  try {
    const ctx = await syncContextOn(db.store, { feedRoot: feed.feedRoot, dataDir, entities: ENTITIES });
    expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
    await ctx.feed.client.close();
    reference = await snapshotStore(db);
  } finally {
    await db.close();
  }
}, 60_000);

afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

describeStores('a failed file on the sync', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let ctx: SyncContext;

  async function open(): Promise<void> {
    data = await tempDir('lf-store-run-');
    db = await stores.create(data.dir);
    ctx = await syncContextOn(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir, entities: ENTITIES });
  }
  afterEach(async () => {
    feed.faults.clear();
    await ctx?.feed.client.close();
    await db?.close();
    await data?.cleanup();
  });

  it('leaves nothing of a dump whose archive breaks half way; the next pass ends as a clean sync', async () => {
    await open();
    // The middle byte inverted on every download: the archive stops decompressing after some of
    // its lines went into the dump's transaction.
    feed.faults.add({ path: DUMP, fault: { kind: 'corrupt' }, times: Infinity });
    const failing = await syncOnce(ctx, { from: FIRST });
    expect(failing.problems).toEqual([{ packet: 501, file: DUMP, reason: expect.any(String) }]);
    expect(
      await db.rows('SELECT count(*) AS n FROM changes WHERE packet = ? AND entity = ?', 501, 'artist'),
    ).toEqual([{ n: 0 }]);
    expect(
      await db.rows('SELECT count(*) AS n FROM quarantine WHERE packet = ? AND entity = ?', 501, 'artist'),
    ).toEqual([{ n: 0 }]);
    const [failed] = await db.rows<{ status: string; attempts: number; next: string | null }>(
      'SELECT status, attempts, next_retry_at AS next FROM dumps WHERE packet = ? AND entity = ?',
      501,
      'artist',
    );
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(Date.parse(failed!.next!)).toBeGreaterThan(Date.now());
    expect(await db.rows('SELECT name FROM feed_files WHERE name = ?', DUMP)).toEqual([]);
    expect(existsSync(join(data.dir, 'files', DUMP))).toBe(false);
    // Packet 500 is complete; 501 is not, so the latest packet stops at 500 and later packets wait.
    expect(failing.completed).toEqual([500, 502, 503]);
    expect(await db.rows("SELECT value FROM meta WHERE key = 'latest_packet'")).toEqual([
      { value: '{"from":500,"number":500}' },
    ]);
    // Follow mode leaves it alone until its retry time; --once asks again at once.
    const deferred = await syncOnce({ ...ctx, policy: { ...ctx.policy, deferFailed: true } });
    expect(deferred).toMatchObject({ problems: [], deferred: 1 });

    feed.faults.clear();
    const recovered = await syncOnce(ctx);
    expect(recovered.problems).toEqual([]);
    expect(recovered.completed).toEqual([501]);
    expect(await snapshotStore(db)).toEqual(reference);
  });

  it('keeps the archives of the newest packets only with --keep-files; their records stay', async () => {
    await open();
    ctx.policy.keepFiles = { kind: 'packets', count: 2 };
    expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
    const files = await db.rows<{ name: string; packet: number; storedPath: string | null }>(
      'SELECT name, packet, stored_path AS "storedPath" FROM feed_files ORDER BY name',
    );
    expect(files.map((f) => f.packet)).toEqual([500, 500, 501, 501, 503, 503]);
    for (const file of files) {
      const stays = file.packet > 503 - 2;
      expect(file.storedPath, file.name).toBe(stays ? join('files', file.name) : null);
      expect(existsSync(join(data.dir, 'files', file.name)), file.name).toBe(stays);
    }
  });
});

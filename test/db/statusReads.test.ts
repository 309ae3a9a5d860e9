import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redactDatabaseUrl } from '../../src/config/databaseUrl.js';
import { openStore } from '../../src/db/client.js';
import { openPostgresStore } from '../../src/db/postgres/client.js';
import type { Reads } from '../../src/db/reads.js';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../src/samplefeed/server.js';
import { acquireWriterLock } from '../../src/sync/lock.js';
import { acquirePostgresWriterLock } from '../../src/sync/postgres/lock.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { describeStores, SQLITE_STORES, type TestDatabase } from '../support/stores.js';

/**
 * The status reads (db/statusReads.ts: `/ready`, `/freshness`, `/metrics`, `livefeed status`,
 * GraphiQL's example) on both stores (issue 17, docs/POSTGRES_PORT.md step 8): each answer over a
 * database synced by its own writer equals the SQLite twin's, synced from the same feed at the same
 * clock; the writer lock's holder is named only while the lock is held.
 */

const manifest = readBundledManifest();
/** Half an hour after the last packet's TIMESTAMP: it waits for a later packet's JSON dumps. */
const CLOCK = new Date(Date.parse(manifest.packets.at(-1)!.timestamp) + 30 * 60_000);

async function syncAtClock(store: SyncStore, dataDir: string): Promise<void> {
  const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  const ctx = await syncContextOn(store, { feedRoot: feed.feedRoot, dataDir, now: () => CLOCK });
  try {
    expect((await syncOnce(ctx, { from: manifest.firstPacket })).problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
    await feed.close();
  }
}

/** Every status read's answer (limits 0 and 3 for the unfinished files). */
async function answers(reads: Reads) {
  return {
    anyPacketSynced: await reads.anyPacketSynced(),
    // Each dialect has migrations of its own (drizzle/sqlite/, drizzle/postgres/): none pending.
    pendingMigrations: (await reads.migrationState()).pending,
    packetTimes: await Promise.all(manifest.packets.map((p) => reads.packetTime(p.number))),
    beforeFirst: await reads.packetTime(manifest.firstPacket - 1),
    upstream: await reads.upstream(),
    demo: await reads.demo(),
    waitingForDumps: await reads.waitingForDumps(),
    packetPosition: await reads.packetPosition(),
    unfinished: [await reads.unfinishedFiles(0), await reads.unfinishedFiles(3)],
    newestDumpsWithChanges: await reads.newestDumpsWithChanges(),
  };
}

let work: Awaited<ReturnType<typeof tempDir>>;
let twin: TestDatabase;
let expected: Awaited<ReturnType<typeof answers>>;

beforeAll(async () => {
  work = await tempDir('lf-status-reads-');
  twin = await SQLITE_STORES.create(join(work.dir, 'twin'));
  await syncAtClock(twin.store, join(work.dir, 'twin'));
  expected = await answers(twin.reads);
}, 60_000);
afterAll(async () => {
  await twin?.close();
  await work?.cleanup();
});

describeStores('status reads', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  beforeAll(async () => {
    data = await tempDir(`lf-status-${stores.kind}-`);
    db = await stores.create(data.dir);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await data?.cleanup();
  });

  it('on an empty database: nothing synced, every migration applied', async () => {
    expect(await db.reads.anyPacketSynced()).toBe(false);
    expect(await db.reads.migrationState()).toMatchObject({ pending: 0 });
    expect(await db.reads.packetPosition()).toEqual({
      highest: null,
      firstIncomplete: null,
      packets: 0,
      completed: 0,
    });
    expect(await db.reads.newestDumpsWithChanges()).toBeUndefined();
    expect(await db.reads.waitingForDumps()).toBeUndefined();
    expect(await db.reads.lockHolder()).toBeUndefined();
  });

  it('after a sync: every answer equals the SQLite twin’s', async () => {
    await syncAtClock(db.store, data.dir);
    const got = await answers(db.reads);
    expect(got).toEqual(expected);
    // Not a comparison of two empty answers: the last packet waits, its dumps are listed.
    expect(got.waitingForDumps).toMatchObject({ packets: 1, oldest: manifest.lastPacket });
    expect(got.unfinished[1]!.files).toHaveLength(3);
    expect(got.packetPosition.completed).toBe(manifest.packets.length - 1);
  });

  it('names the writer lock’s holder only while the lock is held', async () => {
    if (stores.kind === 'sqlite') {
      const store = openStore(db.db);
      try {
        const lock = await acquireWriterLock(store);
        expect(await db.reads.lockHolder()).toMatchObject({ pid: process.pid, host: hostname() });
        lock.release();
      } finally {
        store.close();
      }
    } else {
      const store = await openPostgresStore({ connectionString: db.db, display: redactDatabaseUrl(db.db) });
      try {
        const lock = await acquirePostgresWriterLock(store);
        expect(await db.reads.lockHolder()).toMatchObject({ pid: process.pid, host: hostname() });
        await lock.release();
        // A writer killed with kill -9 leaves its row, but its session (and lock) is gone: no holder.
        await db.rows(
          "INSERT INTO sync_lock (id, pid, host, acquired_at, heartbeat_at) VALUES (1, 4242, 'gone', 'x', 'x')",
        );
        expect(await db.reads.lockHolder()).toBeUndefined();
      } finally {
        await store.close();
      }
    }
    expect(await db.reads.lockHolder()).toBeUndefined();
  });
});

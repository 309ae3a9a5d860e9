import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../src/samplefeed/server.js';
import { postgresSyncStore } from '../../src/sync/postgres/syncStore.js';
import { sqliteSyncStore } from '../../src/sync/sqliteSyncStore.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContextOn } from './harness.js';
import { readBundledManifest } from './manifest.js';
import type { StoreUnderTest } from './readStores.js';

/**
 * The bundled sample feed (JSON dumps and v2 replication packets of every packet) synced through
 * the real writer of either store, for the replication and change stream reads
 * (test/db/feedReads.test.ts).
 */

/** One sync pass of the bundled feed, replication packets on, into `store`; fails on any problem. */
export async function syncBundledFeed(store: SyncStore, dataDir: string): Promise<void> {
  const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  const ctx = await syncContextOn(store, { feedRoot: feed.feedRoot, dataDir, replicationPackets: true });
  try {
    const { problems } = await syncOnce(ctx, { from: readBundledManifest().firstPacket });
    expect(problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
    await feed.close();
  }
}

/**
 * Syncs the bundled feed into `target` and returns the SQLite store that holds it: `target`'s
 * own, or for PostgreSQL a SQLite twin synced the same way (close it after the suite).
 */
export async function fillBundledFeed(target: StoreUnderTest): Promise<Store> {
  if (target.sqlite) {
    await syncBundledFeed(sqliteSyncStore(target.sqlite), target.dir);
    return target.sqlite;
  }
  const pgDir = join(target.dir, 'postgres');
  const twinDir = join(target.dir, 'twin');
  await mkdir(pgDir);
  await mkdir(twinDir);
  await syncBundledFeed(postgresSyncStore(target.postgres!), pgDir);
  const twin = openStore(join(twinDir, 'livefeed.db'));
  await syncBundledFeed(sqliteSyncStore(twin), twinDir);
  return twin;
}

import { join } from 'node:path';
import { expect } from 'vitest';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext, SyncReport } from '../../src/sync/context.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE } from './archives.js';
import { syncContext, syncContextOn, type TestSyncOptions, tempDir, testLogger } from './harness.js';

/** A data folder holding a database synced from the bundled feed. */
export interface SyncedDatabase {
  dir: string;
  dbPath: string;
  report: SyncReport;
  /** Removes the folder (only when this helper made it). */
  cleanup(): Promise<void>;
}

/** Options of {@link syncedDatabase}. */
export interface SyncedOptions {
  /** Folder to sync into (`livefeed.db` there); default a new temporary folder. */
  dataDir?: string;
  /** Wraps the sync context (metrics, events, another client). */
  instrument?: (ctx: SyncContext) => SyncContext;
}

/**
 * Syncs the bundled sample feed (JSON dumps only, served on port 0) into `livefeed.db` of a data
 * folder with one pass; every packet completes (they are long settled).
 */
export async function syncedDatabase(options: SyncedOptions = {}): Promise<SyncedDatabase> {
  const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  const data = options.dataDir ? { dir: options.dataDir, cleanup: async () => {} } : await tempDir();
  const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir });
  try {
    const report = await syncOnce(options.instrument ? options.instrument(ctx) : ctx);
    return { dir: data.dir, dbPath: join(data.dir, 'livefeed.db'), report, cleanup: data.cleanup };
  } finally {
    ctx.store.close();
    await ctx.feed.client.close();
    await feed.close();
  }
}

/**
 * One pass of the feed at `options.feedRoot` into `store` (either store's sync writer), from packet
 * `from` when given; the pass must have no problem. The feed client is closed after, the store
 * stays open.
 */
export async function syncPassOn(store: SyncStore, options: TestSyncOptions, from?: number): Promise<void> {
  const ctx = await syncContextOn(store, options);
  try {
    expect((await syncOnce(ctx, { from })).problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
  }
}

/**
 * Syncs the bundled sample feed (JSON dumps only, served on port 0) into either store with one
 * pass through its sync writer (`dir`: the data folder); the feed and its client are closed after,
 * the store stays open.
 * @returns the pass's report.
 */
export async function syncSampleFeedOn(writer: SyncStore, dir: string): Promise<SyncReport> {
  const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  const ctx = await syncContextOn(writer, { feedRoot: feed.feedRoot, dataDir: dir });
  try {
    return await syncOnce(ctx);
  } finally {
    await ctx.feed.client.close();
    await feed.close();
  }
}

/**
 * One pass of the sample feed at `feedRoot` into `<dataDir>/livefeed.db`, every signature verified
 * against the test key in `fail` mode, as a production sync runs; store and client are closed after.
 * @returns the database path.
 * @throws Error listing the pass's problems when it had any.
 */
export async function syncVerified(
  feedRoot: string,
  dataDir: string,
  options: { replicationPackets?: boolean } = {},
): Promise<string> {
  const logger = testLogger();
  const ctx = await syncContext({
    feedRoot,
    dataDir,
    logger,
    verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    replicationPackets: options.replicationPackets,
  });
  try {
    const { problems } = await syncOnce(ctx);
    if (problems.length > 0) throw new Error(`sync of ${feedRoot} had problems: ${JSON.stringify(problems)}`);
    return ctx.store.path;
  } finally {
    ctx.store.close();
    await ctx.feed.client.close();
  }
}

import { mkdir } from 'node:fs/promises';
import { expect } from 'vitest';
import { BUNDLED_SIGNING_KEY } from '../../src/cli/targets.js';
import { BUNDLED_FEED_ROOT } from '../../src/samplefeed/bundled.js';
import { startSampleFeed } from '../../src/samplefeed/server.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContextOn, testLogger } from './harness.js';
import { SQLITE_STORES, type TestDatabase } from './stores.js';

/**
 * What `livefeed sync --demo --once` stores, made in process as a reference: a clean sync of the
 * bundled feed into a new SQLite file under `dataDir`, replication packets included, every
 * signature verified with its TEST key, a missing JSON dump settled only by a later packet's (the
 * CLI's default). Compare a real run's database with it through `snapshotStore` (stores.ts).
 * @returns the open reference database (close it).
 * @throws (fails the test) when the pass has problems.
 */
export async function syncDemoReference(dataDir: string): Promise<TestDatabase> {
  await mkdir(dataDir, { recursive: true });
  const bundled = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  const db = await SQLITE_STORES.create(dataDir);
  try {
    const ctx = await syncContextOn(db.store, {
      feedRoot: bundled.feedRoot,
      dataDir,
      replicationPackets: true,
      verifier: await createVerifier(BUNDLED_SIGNING_KEY, 'fail', testLogger()),
    });
    try {
      expect((await syncOnce({ ...ctx, policy: { ...ctx.policy, settleAfterMs: null } })).problems).toEqual(
        [],
      );
    } finally {
      await ctx.feed.client.close();
    }
    return db;
  } catch (error) {
    await db.close();
    throw error;
  } finally {
    await bundled.close();
  }
}

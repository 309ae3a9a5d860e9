import { expect } from 'vitest';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContextOn } from './harness.js';

/**
 * One sync pass (sync/worker.ts syncOnce, replication packets on) of the feed at `feedRoot` into
 * `writer` from packet `from`, archives under `dataDir`; the pass must report no problem.
 */
export async function syncPassFrom(
  writer: SyncStore,
  where: { feedRoot: string; dataDir: string },
  from: number,
): Promise<void> {
  const ctx = await syncContextOn(writer, { ...where, replicationPackets: true });
  try {
    expect((await syncOnce(ctx, { from })).problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
  }
}

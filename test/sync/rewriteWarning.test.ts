import { afterAll, beforeAll, expect, it } from 'vitest';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { SQLITE_STORES, type TestDatabase } from '../support/stores.js';
import { syncPassFrom } from '../support/syncPass.js';

/**
 * A sync pass that stores packets behind the change stream's readers (a `sync --from` further back)
 * and then fails: the packets stored before the failure stay stored, so the pass still warns
 * (`change-stream-rewritten`, sync/rewriteNotice.ts); the next pass would not, having started from
 * the rewrites as they are then.
 */

const { firstPacket } = readBundledManifest();
const MIDDLE = firstPacket + 8;

let feed: SampleFeed;
let data: Awaited<ReturnType<typeof tempDir>>;
let db: TestDatabase;

beforeAll(async () => {
  feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  data = await tempDir();
  db = await SQLITE_STORES.create(data.dir);
  await syncPassFrom(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir }, MIDDLE);
});
afterAll(async () => {
  await db?.close();
  await feed?.close();
  await data?.cleanup();
});

it('warns also when the pass fails after storing packets behind the readers', async () => {
  // The token refused on a later packet's dump: the pass stops there (exit 3 in the CLI).
  feed.faults.add({ path: jsonDumpPath(firstPacket + 3, 'series'), fault: { kind: 'wrong-token' } });
  const lines: string[] = [];
  const ctx = await syncContextOn(db.store, {
    feedRoot: feed.feedRoot,
    dataDir: data.dir,
    replicationPackets: true,
    logger: testLogger(lines),
  });
  try {
    await expect(syncOnce(ctx, { from: firstPacket })).rejects.toThrow();
  } finally {
    await ctx.feed.client.close();
  }
  const warned = lines.map((line) => JSON.parse(line)).filter((e) => e.event === 'change-stream-rewritten');
  expect(warned).toEqual([expect.objectContaining({ level: 40, fromPacket: firstPacket })]);
  const [rewrites] = await db.rows<{ value: string }>("SELECT value FROM meta WHERE key = 'feed_rewrites'");
  const packets = (JSON.parse(rewrites!.value) as [number, number][]).map(([, packet]) => packet);
  // The archives stored before the failure stay stored (its packet's earlier ones too), none after it.
  expect(Math.max(...packets)).toBe(firstPacket + 3);
});

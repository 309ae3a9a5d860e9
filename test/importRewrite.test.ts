import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore } from '../src/db/client.js';
import { createPacketEvents, watchCompletedPackets } from '../src/ops/events.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../src/samplefeed/server.js';
import { startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';
import { readBundledManifest } from './support/manifest.js';
import { describeStores, type TestDatabase } from './support/stores.js';
import { syncPassFrom } from './support/syncPass.js';

/**
 * `livefeed import` of an older packet's JSON dump into a database whose change stream has served
 * it (a real process, the bundled feed's archive), on both stores: the import warns the operator
 * (`change-stream-rewritten`) and announces the packet again (its `synced_at` moves; PostgreSQL
 * notifies), so a `serve`'s watch wakes its `entityChanged` followers at once (they then rewind,
 * test/ops/changeStreamRewound.test.ts) instead of at the next packet a sync completes.
 */

const { firstPacket } = readBundledManifest();

describeStores('livefeed import behind the change stream', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const syncedAt = async () =>
    (await db.rows<{ at: string }>('SELECT synced_at AS at FROM packets WHERE number = ?', firstPacket))[0]!
      .at;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    await syncPassFrom(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir }, firstPacket);
  });
  afterAll(async () => {
    await db?.close();
    await feed?.close();
    await data?.cleanup();
  });

  it('warns and announces the packet again; a SQLite serve watch hears it', async () => {
    const before = await syncedAt();
    const events = createPacketEvents();
    const iterator = events.subscribe('packetSynced')[Symbol.asyncIterator]();
    // The subscription starts listening at its first read.
    const first = iterator.next();
    const watcher = stores.kind === 'sqlite' ? openStore(db.db, { readonly: true }) : undefined;
    const stop = watcher && watchCompletedPackets(watcher, events, { intervalMs: 50 });
    try {
      const archive = join(BUNDLED_FEED_ROOT, 'json-dumps', `json-dump-${firstPacket}`, 'area.tar.xz');
      const run = startCli(['import', archive, '--packet', String(firstPacket), '--db', db.db]);
      expect((await run.exited).code, run.stderr.join('\n')).toBe(0);
      expect(run.events().filter((e) => e.event === 'change-stream-rewritten')).toEqual([
        expect.objectContaining({ level: 40, fromPacket: firstPacket, epoch: 1 }),
      ]);
      expect(Date.parse(await syncedAt())).toBeGreaterThan(Date.parse(before));
      if (!watcher) return;
      const heard = await Promise.race([
        first,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('no packetSynced in 5 s')), 5000),
        ),
      ]);
      expect(heard.value).toBe(firstPacket);
    } finally {
      stop?.();
      watcher?.close();
      await iterator.return?.();
    }
  }, 60_000);
});

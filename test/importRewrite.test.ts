import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore } from '../src/db/client.js';
import { createPacketEvents, watchCompletedPackets } from '../src/ops/events.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../src/samplefeed/server.js';
import { writeJsonDump } from './support/archives.js';
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
const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));

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

  it('changes nothing when the archive holds exactly the changes stored: no warning, no new epoch', async () => {
    const before = await syncedAt();
    const archive = join(BUNDLED_FEED_ROOT, 'json-dumps', `json-dump-${firstPacket}`, 'area.tar.xz');
    const run = startCli(['import', archive, '--packet', String(firstPacket), '--db', db.db]);
    expect((await run.exited).code, run.stderr.join('\n')).toBe(0);
    expect(run.events().filter((e) => e.event === 'change-stream-rewritten')).toEqual([]);
    expect(run.stdout.join('\n')).toContain(
      'identical to the copy stored, so the change stream is unchanged',
    );
    expect(await db.rows("SELECT value FROM meta WHERE key = 'feed_rewrites'")).toEqual([]);
    expect(await syncedAt()).toBe(before);
  }, 60_000);

  it('warns and announces the packet again; a SQLite serve watch hears it', async () => {
    const before = await syncedAt();
    const events = createPacketEvents();
    const iterator = events.subscribe('packetSynced')[Symbol.asyncIterator]();
    // The subscription starts listening at its first read.
    const first = iterator.next();
    const watcher = stores.kind === 'sqlite' ? openStore(db.db, { readonly: true }) : undefined;
    const stop = watcher && watchCompletedPackets(watcher, events, { intervalMs: 50 });
    try {
      // Another copy of the packet's area dump: its first line's name corrected.
      const [line0, ...rest] = readFileSync(join(FIXTURES, 'samples', 'area.jsonl'), 'utf8')
        .split('\n')
        .slice(0, 2);
      const corrected = JSON.stringify({ ...JSON.parse(line0!), name: 'Corrected' });
      const archive = (
        await writeJsonDump(join(data.dir, 'corrected'), {
          packet: firstPacket,
          entity: 'area',
          lines: [corrected, ...rest],
        })
      ).path;
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

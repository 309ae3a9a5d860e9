import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RECORD_HISTORY_FROM_SQL } from '../../src/db/historyQueries.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { writeJsonDump } from '../support/archives.js';
import { tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { syncPassFrom } from '../support/syncPass.js';

/**
 * Which stores behind the change stream count as a rewrite (db/feedServed.ts
 * `storesBehindServed`, on both stores): one below the pruning cutoff too, since pruning keeps each
 * MBID's newest change and such a store may change the current state a client holds (it is then
 * told to reload, db/feedWindow.ts); one that holds exactly the changes already stored never does.
 */

const { firstPacket } = readBundledManifest();
const CUTOFF = firstPacket + 5;
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describeStores('stores behind the change stream', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const rewrites = async () =>
    (await db.rows<{ value: string }>("SELECT value FROM meta WHERE key = 'feed_rewrites'"))[0]?.value;
  /** Stores a JSON dump of `packet` holding `lines` through the store's own ingest. */
  const store = async (packet: number, lines: string[], name: string) => {
    const built = await writeJsonDump(join(data.dir, name), { packet, entity: 'label', lines });
    return db.store.ingestDump({ packet, entity: 'label', archivePath: built.path, file: null });
  };

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    await syncPassFrom(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir }, firstPacket);
    await db.rows(RECORD_HISTORY_FROM_SQL, String(CUTOFF));
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await feed?.close();
    await data?.cleanup();
  });

  it('records a rewrite below the pruning cutoff as above it, none for the same changes again', async () => {
    const below = [JSON.stringify({ id: id(1), name: 'Below' })];
    expect((await store(CUTOFF - 2, below, 'below')).unchanged).toBe(false);
    const first = await rewrites();
    expect(first).toContain(`${CUTOFF - 2}`);
    expect((await store(CUTOFF - 2, below, 'below-again')).unchanged).toBe(true);
    expect(await rewrites()).toBe(first);

    const lines = [JSON.stringify({ id: id(2), name: 'Above' })];
    expect((await store(CUTOFF + 1, lines, 'above')).unchanged).toBe(false);
    const second = await rewrites();
    expect(second).not.toBe(first);
    // The same changes again: nothing a reader read changed, no new epoch.
    expect((await store(CUTOFF + 1, lines, 'again')).unchanged).toBe(true);
    expect(await rewrites()).toBe(second);
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { noteServedFrontier } from '../../src/db/feedServed.js';
import { feedFrontier } from '../../src/db/feedWindow.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { PacketTransaction } from '../../src/sync/packetTransaction.js';
import type { SqliteSyncStore } from '../../src/sync/syncStore.js';
import { tempDir, testLogger } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { SQLITE_STORES, type TestDatabase } from '../support/stores.js';
import { syncPassFrom } from '../support/syncPass.js';

/**
 * The frontier served, noted inside a packet's transaction on SQLite (db/feedServed.ts): what the
 * transaction wrote since its BEGIN is uncommitted and no reader saw it, so a note then takes the
 * frontier of the committed state, noted at BEGIN; after COMMIT notes read the frontier again.
 * Otherwise an archive stored after one that completed packets in the same transaction would count
 * as stored behind readers (a rewrite, db/feedRewrites.ts) though none could have read past it.
 */

const { firstPacket, lastPacket } = readBundledManifest();

let feed: SampleFeed;
let data: Awaited<ReturnType<typeof tempDir>>;
let db: TestDatabase;
const served = () => db.rows<{ value: string }>("SELECT value FROM meta WHERE key = 'feed_served'");

beforeAll(async () => {
  feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  data = await tempDir();
  db = await SQLITE_STORES.create(data.dir);
  await syncPassFrom(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir }, firstPacket);
});
afterAll(async () => {
  await db?.close();
  await feed?.close();
  await data?.cleanup();
});

it('inside a packet transaction a note takes the committed frontier; after COMMIT the frontier again', async () => {
  const store = db.store as SqliteSyncStore;
  const mark = (number: number) =>
    store.sqlite
      .prepare("UPDATE meta SET value = ? WHERE key = 'latest_packet'")
      .run(JSON.stringify({ from: firstPacket, number }));
  const head = feedFrontier(store)!;
  expect(head).toBe(lastPacket - 1);
  // Committed: the frontier three packets back, nothing noted yet.
  mark(head - 3);
  store.sqlite.prepare("DELETE FROM meta WHERE key = 'feed_served'").run();
  const transaction = new PacketTransaction(store);
  transaction.begin(testLogger());
  expect(await served()).toEqual([{ value: String(head - 3) }]);
  // An uncommitted write that moves the frontier on (the mark, as a completion moves it).
  mark(head);
  expect(feedFrontier(store)).toBe(head);
  expect(noteServedFrontier(store)).toBe(head - 3); // no reader has seen `head`
  expect(await served()).toEqual([{ value: String(head - 3) }]);
  expect(transaction.commit()).toBe(true);
  expect(noteServedFrontier(store)).toBe(head);
  expect(await served()).toEqual([{ value: String(head) }]);
});

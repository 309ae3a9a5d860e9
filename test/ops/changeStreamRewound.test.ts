import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FeedEvent } from '../../src/db/changeFeedQueries.js';
import { followChangeStream } from '../../src/ops/changeStream.js';
import { createPacketEvents } from '../../src/ops/events.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { GrowingFeed } from '../support/growingFeed.js';
import { tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { syncPassFrom } from '../support/syncPass.js';

/**
 * A live follower of the change stream (`entityChanged`, ops/changeStream.ts) when older packets
 * are stored behind its position (db/feedRewrites.ts), on both stores: it follows from the head of
 * a database synced from the middle of the bundled feed; a sync `--from` the feed's first packet
 * stores events behind it; at the next wake-up it is given every event from that packet on, in
 * order, instead of nothing.
 */

const { firstPacket, lastPacket } = readBundledManifest();
const MIDDLE = firstPacket + 8;

describeStores('a live follower when older packets are stored behind it', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const sync = (from: number) => syncPassFrom(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir }, from);

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
  });
  afterAll(async () => {
    await db?.close();
    await feed?.close();
    await data?.cleanup();
  });

  it('is given the events stored behind it, from the first such packet on, in order', async () => {
    await sync(MIDDLE);
    const events = createPacketEvents();
    const follower = followChangeStream(db.reads, events, {});
    const next = follower.next(); // subscribes and reads its start: the head
    await new Promise((resolve) => setTimeout(resolve, 50));
    await sync(firstPacket);
    events.publish('packetSynced', firstPacket);
    const seen: FeedEvent[] = [];
    const expected = new GrowingFeed(BUNDLED_FEED_ROOT).expectedEvents(firstPacket, lastPacket - 1);
    let result = await next;
    while (!result.done) {
      seen.push(result.value);
      if (seen.length === expected.length) break;
      result = await follower.next();
    }
    await follower.return(undefined);
    const label = (e: FeedEvent) => `${e.packet} ${'kind' in e ? e.kind : 'change'} ${e.mbid}`;
    expect(seen.map(label)).toEqual(expected);

    // A follower that starts after the rewrites starts in their epoch: it is sent nothing old.
    const late = followChangeStream(db.reads, events, {});
    const first = late.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    events.publish('packetSynced', firstPacket);
    const quiet = await Promise.race([
      first.then(() => 'an event'),
      new Promise((resolve) => setTimeout(() => resolve('nothing'), 1500)),
    ]);
    expect(quiet).toBe('nothing');
    events.publish('packetSynced', firstPacket);
    void late.return(undefined);
  });
});

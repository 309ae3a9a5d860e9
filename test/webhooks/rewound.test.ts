import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { deliverWebhook, type WebhookEndpoint } from '../../src/webhooks/deliver.js';
import { changeStreamSource } from '../../src/webhooks/source.js';
import { GrowingFeed } from '../support/growingFeed.js';
import { tempDir, testLogger } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { syncPassFrom } from '../support/syncPass.js';
import { type Receiver, startReceiver } from '../support/webhookReceiver.js';

/**
 * A webhook when older packets are stored behind its position (db/feedRewrites.ts), on both
 * stores: it has sent every event of a database synced from the middle of the bundled feed; a sync
 * `--from` the feed's first packet then stores events before its position. The next delivery
 * starts again at the first packet stored behind it and sends every event from there, in order,
 * with ids of the new epoch (so a receiver's idempotency key does not drop them), and says so in
 * the log; nothing is lost, and afterwards nothing is sent twice more. A receiver that is down
 * then gets the same events once it is back, and the warning comes once, not at every retry.
 */

const { firstPacket, lastPacket } = readBundledManifest();
const MIDDLE = firstPacket + 8;

describeStores('webhook delivery when older packets are stored behind its position', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let receiver: Receiver;
  const growing = () => new GrowingFeed(BUNDLED_FEED_ROOT);
  const hook = (): WebhookEndpoint => ({
    name: 'hook',
    url: receiver.url,
    displayUrl: receiver.url,
    secret: 'receiver-shared-secret-0123456789',
    entities: null,
    mbids: null,
    batchSize: 7,
  });
  const deliver = (lines: string[] = [], on = db, retryPausesMs?: number[]) =>
    deliverWebhook(
      {
        store: on.webhooks,
        source: changeStreamSource,
        logger: testLogger(lines),
        userAgent: 'livefeed/test',
        retryPausesMs,
      },
      hook(),
    );
  const sync = (from: number, on = db, dir = data.dir) =>
    syncPassFrom(on.store, { feedRoot: feed.feedRoot, dataDir: dir }, from);
  const rewoundWarnings = (lines: string[]) =>
    lines.map((line) => JSON.parse(line)).filter((line) => line.event === 'webhook-rewound');
  const label = (edge: { node: { __typename: string; mbid: string; packet: number; kind?: unknown } }) =>
    `${edge.node.packet} ${edge.node.__typename === 'EntityChange' ? 'change' : edge.node.kind} ${edge.node.mbid}`;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await db?.close();
    await feed?.close();
    await receiver?.close();
    await data?.cleanup();
  });

  it('sends the events stored behind it again from the first such packet, in order, and loses none', async () => {
    await db.webhooks.register([hook()], new Date().toISOString());
    await sync(MIDDLE);
    const first = await deliver();
    const sent = receiver.accepted().flatMap((body) => body.edges);
    // The newest packet waits for a later packet's JSON dumps (changeFeed.test.ts).
    expect(sent.map(label)).toEqual(growing().expectedEvents(MIDDLE, lastPacket - 1));
    expect(first).toMatchObject({ outcome: 'caught-up', delivered: sent.length });
    expect(sent.every((edge) => !edge.id.includes('@'))).toBe(true);

    await sync(firstPacket);
    const lines: string[] = [];
    const again = await deliver(lines);
    const resent = receiver
      .accepted()
      .flatMap((body) => body.edges)
      .slice(sent.length);
    expect(resent.map(label)).toEqual(growing().expectedEvents(firstPacket, lastPacket - 1));
    expect(again).toMatchObject({ outcome: 'caught-up', delivered: resent.length });
    // Ids of the new epoch: an event of a packet stored again is not taken for the one it replaces.
    expect(resent.every((edge) => /@\d+$/.test(edge.id))).toBe(true);
    expect(new Set(resent.map((edge) => edge.id)).size).toBe(resent.length);
    const warned = rewoundWarnings(lines);
    expect(warned).toEqual([expect.objectContaining({ level: 40, webhook: 'hook', packet: firstPacket })]);
    expect(warned[0].msg).toContain(
      `events of packet ${firstPacket} and later were stored behind its position`,
    );

    // Caught up in the new epoch: nothing more, nothing twice.
    expect(await deliver()).toMatchObject({ outcome: 'caught-up', delivered: 0 });
    expect(receiver.accepted().flatMap((body) => body.edges)).toHaveLength(sent.length + resent.length);
  });

  it('keeps the position it starts again from while the receiver is down, and warns once', async () => {
    const own = await tempDir();
    const other = await stores.create(own.dir);
    try {
      const before = receiver.accepted().length;
      await other.webhooks.register([hook()], new Date().toISOString());
      await sync(MIDDLE, other, own.dir);
      expect(await deliver([], other)).toMatchObject({ outcome: 'caught-up' });
      await sync(firstPacket, other, own.dir);

      receiver.status = 503;
      const lines: string[] = [];
      expect(await deliver(lines, other, [0, 0])).toMatchObject({ outcome: 'failed', delivered: 0 });
      expect(await deliver(lines, other)).toMatchObject({ outcome: 'failed', delivered: 0 });
      // Four POSTs refused over two runs; the rewind was noticed and stored once.
      expect(receiver.posts.filter((post) => post.status === 503)).toHaveLength(4);
      expect(rewoundWarnings(lines)).toEqual([expect.objectContaining({ packet: firstPacket })]);
      // What it has been sent counts up to the packet before the one sent again.
      expect((await other.webhooks.states())[0]).toMatchObject({
        deliveredPacket: firstPacket - 1,
        attempts: 4,
      });

      receiver.status = 204;
      expect(await deliver(lines, other)).toMatchObject({ outcome: 'caught-up' });
      expect(rewoundWarnings(lines)).toHaveLength(1);
      const resent = receiver
        .accepted()
        .slice(before)
        .flatMap((body) => body.edges)
        .filter((edge) => edge.id.includes('@'));
      expect(resent.map(label)).toEqual(growing().expectedEvents(firstPacket, lastPacket - 1));
    } finally {
      await other.close();
      await own.cleanup();
    }
  });
});

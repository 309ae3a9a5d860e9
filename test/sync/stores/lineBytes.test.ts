import { afterEach, beforeEach, expect, it } from 'vitest';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { writeJsonDump } from '../../support/archives.js';
import { syncContextOn, tempDir } from '../../support/harness.js';
import { describeStores, type TestDatabase } from '../../support/stores.js';

/**
 * Lines the fast path refuses, on both stores (FEED.md, JSON dump archives: UTF-8, raw `\r` in
 * strings, spacing varies): a raw control character in a string with TAB spacing between tokens is
 * stored re-escaped, the same value; bytes that are not UTF-8 are quarantined with the reason,
 * never stored with U+FFFD in their place.
 */

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const LINES = [
  Buffer.from(JSON.stringify({ id: id(1), name: 'Plain' })),
  Buffer.from(`{"id":\t"${id(2)}",\t"name":"Tab\there\rand CR"}`),
  Buffer.concat([Buffer.from(`{"id":"${id(3)}","name":"Caf`), Buffer.from([0xe9]), Buffer.from('"}')]),
];

describeStores('lines the fast path refuses', (stores) => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase | undefined;

  beforeEach(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    await writeJsonDump(feedDir.dir, {
      packet: 5,
      entity: 'artist',
      lines: [],
      omitMembers: ['mbdump/artist'],
      extraMembers: [
        { name: 'mbdump/artist', content: Buffer.concat(LINES.flatMap((l) => [l, Buffer.from('\n')])) },
      ],
    });
    feed = await startSampleFeed({ root: feedDir.dir });
    db = await stores.create(dataDir.dir);
  });
  afterEach(async () => {
    await db?.close();
    db = undefined;
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  it('stores a re-escaped line with its spacing, and quarantines bytes that are not UTF-8', async () => {
    const ctx = await syncContextOn(db!.store, {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['artist'],
      replicationPackets: false,
    });
    try {
      expect((await syncOnce(ctx, { from: 5, to: 5 })).problems).toEqual([]);
    } finally {
      await ctx.feed.client.close();
    }
    const changes = await db!.rows<{ position: number; data: string }>(
      'SELECT position, data FROM changes ORDER BY position',
    );
    expect(changes.map((c) => [c.position, JSON.parse(c.data)])).toEqual([
      [1, { id: id(1), name: 'Plain' }],
      [2, { id: id(2), name: 'Tab\there\rand CR' }],
    ]);
    const quarantined = await db!.rows<{ line: number; reason: string }>(
      'SELECT line, reason FROM quarantine ORDER BY line',
    );
    expect(quarantined).toEqual([{ line: 3, reason: 'not UTF-8 (its bad bytes shown as U+FFFD)' }]);
  });
});

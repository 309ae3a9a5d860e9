import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { FeedClient } from '../../src/feed/client.js';
import { FeedHttpError } from '../../src/feed/errors.js';
import { SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { sqliteSyncStore } from '../../src/sync/sqliteSyncStore.js';
import { syncOnce } from '../../src/sync/worker.js';
import { writeJsonDump } from '../support/archives.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import { writeReplicationPacket } from '../support/replicationArchives.js';

/**
 * FEED.md, Errors: a missing file's 404 is `text/plain` (`Can't find specified JSON dump!`), a path
 * that matches no route gets an HTML page. Only the first is "no dump": taking a route miss for it
 * (a wrong feed root, an entity type path upstream does not serve) would let every hour of that
 * type settle as NO_CHANGES once later dumps exist. A real sample feed on port 0, its `area` path
 * answered by an HTML 404 as a route miss is.
 */

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const HTML_404 = {
  kind: 'status',
  status: 404,
  body: '<!doctype html><title>404</title>',
  contentType: 'text/html; charset=utf-8',
} as const;

let feedDir: Awaited<ReturnType<typeof tempDir>>;
let dataDir: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;
let store: Store | undefined;

beforeEach(async () => {
  feedDir = await tempDir('feed-');
  dataDir = await tempDir();
  for (let packet = 40; packet <= 42; packet++) {
    const lines = [JSON.stringify({ id: id(packet), name: `Artist ${packet}` })];
    await writeJsonDump(feedDir.dir, { packet, entity: 'artist', lines });
    // Upstream holds each hour: a 404 of a dump there can mean "no changes".
    await writeReplicationPacket(feedDir.dir, { packet, format: 'v2', rows: [] });
  }
  feed = await startSampleFeed({ root: feedDir.dir });
});

afterEach(async () => {
  store?.close();
  store = undefined;
  await feed.close();
  await feedDir.cleanup();
  await dataDir.cleanup();
});

describe('a 404 that is an HTML page', () => {
  it('is an error of the client, never a missing file; a text/plain 404 stays missing', async () => {
    const client = new FeedClient({
      feedRoot: feed.feedRoot,
      token: SAMPLE_TOKEN,
      retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
      timeoutMs: 5000,
    });
    try {
      const missing = await client.download('json-dumps/json-dump-41/area.tar.xz', dataDir.dir);
      expect(missing).toEqual({ status: 'missing', body: "Can't find specified JSON dump!" });
      expect(await client.text('json-dumps/json-dump-41/area.tar.xz.asc')).toBeNull();

      feed.faults.add({ path: /area\.tar\.xz(\.asc)?$/, fault: HTML_404, times: Infinity });
      const download = client.download('json-dumps/json-dump-41/area.tar.xz', dataDir.dir);
      await expect(download).rejects.toThrow(FeedHttpError);
      await expect(download).rejects.toThrow(
        /HTTP 404 from .*area\.tar\.xz\?token=\*\*\*: the feed has no route at this path/,
      );
      await expect(download).rejects.not.toThrow(SAMPLE_TOKEN);
      await expect(client.text('json-dumps/json-dump-41/area.tar.xz.asc')).rejects.toThrow(/no route/);
      // Not retried: one request each (a route does not appear by asking again).
      const asked = feed.requests.filter((r) => r.path.endsWith('json-dump-41/area.tar.xz'));
      expect(asked).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it('in a sync: the dumps are FAILED with the reason, not settled, and their packets wait', async () => {
    feed.faults.add({ path: /\/area\.tar\.xz$/, fault: HTML_404, times: Infinity });
    store = openStore(`${dataDir.dir}/livefeed.db`);
    const base = await syncContextOn(sqliteSyncStore(store), {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
    });
    // Only a later packet's JSON dump settles a 404 here, never the clock.
    const ctx = { ...base, policy: { ...base.policy, settleAfterMs: null } };
    try {
      const report = await syncOnce(ctx, { from: 40, to: 42 });
      const rows = store.sqlite
        .prepare("SELECT packet, status, error FROM dumps WHERE entity = 'area' ORDER BY packet")
        .all() as { packet: number; status: string; error: string }[];
      expect(rows.map((r) => [r.packet, r.status])).toEqual([
        [40, 'FAILED'],
        [41, 'FAILED'],
        [42, 'FAILED'],
      ]);
      for (const row of rows) expect(row.error).toMatch(/no route at this path/);
      expect(report.completed).toEqual([]);
      expect(report.problems.map((p) => p.packet)).toEqual([40, 41, 42]);

      // Once the route answers again (404 text/plain: no area changes), the evidence settles them.
      feed.faults.clear();
      const after = await syncOnce(ctx, { from: 40, to: 42 });
      expect(after.completed).toEqual([40, 41]);
    } finally {
      await ctx.feed.client.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeSearchIndex } from '../../src/db/searchMerge.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContext, tempDir, testLogger } from '../support/harness.js';
import { SEARCH_SEGMENTS_SQL } from '../support/searchFeed.js';

describe('a sync pass ends with the search index merged (the bundled feed, a real SQLite file)', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir('lf-search-merge-pass-');
  });
  afterAll(async () => {
    await feed?.close();
    await data?.cleanup();
  });

  it('leaves one segment after 24 packets of dumps, and logs the merge', async () => {
    const lines: string[] = [];
    const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir, logger: testLogger(lines) });
    try {
      const report = await syncOnce(ctx);
      expect(report.completed).toHaveLength(24);
      expect(ctx.store.sqlite.prepare(SEARCH_SEGMENTS_SQL).pluck().get()).toBe(1);
      ctx.store.sqlite.exec("INSERT INTO search_index(search_index) VALUES('integrity-check')");
      expect(mergeSearchIndex(ctx.store.sqlite)).toMatchObject({ steps: 1, done: true });
      const merges = lines.map((line) => JSON.parse(line)).filter((event) => event.event === 'search-merge');
      expect(merges).toHaveLength(1);
      expect(merges[0]).toMatchObject({ done: true });
      expect(merges[0].steps).toBeGreaterThan(1);
    } finally {
      await ctx.feed.client.close();
      ctx.store.close();
    }
  });
});

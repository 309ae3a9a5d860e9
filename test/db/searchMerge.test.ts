import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { mergeSearchIndex } from '../../src/db/searchMerge.js';
import { searchCount, searchHits } from '../../src/db/searchQueries.js';
import { tempDir } from '../support/harness.js';
import { SEARCH_SEGMENTS_SQL, storeDump } from '../support/searchFeed.js';

const mbid = (n: number) => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const WORDS = ['river', 'stone', 'night', 'glass', 'ember', 'tide'];
/** Artist `n` of packet `packet`: its name changes with the packet, so later dumps replace entries. */
const artist = (n: number, packet: number) =>
  JSON.stringify({
    id: mbid(n),
    name: `${WORDS[(n + packet) % WORDS.length]} ${WORDS[(n * 3) % WORDS.length]} ${n}`,
    'sort-name': `Artist ${n}`,
  });

// Each dump's COMMIT writes its entries as a new FTS5 segment; six dumps leave several.
const PACKETS = [30, 31, 32, 33, 34, 35];
const SEARCHES = [['"river"'], ['"ti"*'], ['"night"', '"glass"'], ['"artist"', '"1"*']];

describe('mergeSearchIndex (a real SQLite file, dumps stored through the ingest)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  const answers = () =>
    SEARCHES.map((phrases) => {
      const filter = { phrases, slots: null };
      const page = searchHits(store, filter, undefined, 500, { commonAbove: 1000 });
      return { count: searchCount(store, filter), page: page.map((hit) => [hit.change.id, hit.bm25]) };
    });
  const segments = () => store.sqlite.prepare(SEARCH_SEGMENTS_SQL).pluck().get() as number;

  beforeEach(async () => {
    dir = await tempDir('lf-search-merge-');
    store = openStore(join(dir.dir, 'livefeed.db'));
    for (const packet of PACKETS) {
      // Half the artists each time: the other half keep the entry an earlier dump wrote.
      const first = packet % 2 === 0 ? 0 : 40;
      const lines = Array.from({ length: 60 }, (_, i) => artist(first + i, packet));
      await storeDump(store, dir.dir, packet, 'artist', lines);
    }
  }, 60_000);
  afterEach(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('merges every segment into one, and the searches answer exactly as before', () => {
    const before = answers();
    expect(before.every((answer) => answer.count > 0)).toBe(true);
    expect(segments()).toBeGreaterThan(1);

    const merged = mergeSearchIndex(store.sqlite);
    expect(merged).toMatchObject({ done: true });
    expect(merged.steps).toBeGreaterThan(1);
    expect(segments()).toBe(1);
    expect(answers()).toEqual(before);
    store.sqlite.exec("INSERT INTO search_index(search_index) VALUES('integrity-check')");

    // Nothing is left: one statement that changes nothing.
    expect(mergeSearchIndex(store.sqlite)).toMatchObject({ steps: 1, done: true });
  });

  it('stops when its budget is spent and resumes at the next call', () => {
    const before = answers();
    const first = mergeSearchIndex(store.sqlite, 0);
    expect(first).toMatchObject({ steps: 1, done: false });
    expect(answers()).toEqual(before);
    expect(mergeSearchIndex(store.sqlite)).toMatchObject({ done: true });
    expect(mergeSearchIndex(store.sqlite)).toMatchObject({ steps: 1, done: true });
    expect(answers()).toEqual(before);
  });

  it('an index merged and then written again merges again', async () => {
    mergeSearchIndex(store.sqlite);
    await storeDump(store, dir.dir, 36, 'artist', [artist(7, 36), artist(200, 36)]);
    await storeDump(store, dir.dir, 37, 'artist', [artist(8, 37)]);
    const before = answers();
    expect(mergeSearchIndex(store.sqlite).steps).toBeGreaterThan(1);
    expect(answers()).toEqual(before);
  });
});

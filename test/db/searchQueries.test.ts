import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { changeId, entitySlot } from '../../src/db/keys.js';
import { COMMON_MIN, commonAboveFor, indexedEntities, rankingPhrases } from '../../src/db/searchCommon.js';
import { type SearchFilter, type SearchHit, searchCount, searchHits } from '../../src/db/searchQueries.js';
import { tempDir } from '../support/harness.js';
import { storeDump } from '../support/searchFeed.js';

const mbid = (n: number) => `c0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const artist = (n: number, fields: Record<string, unknown>) => JSON.stringify({ id: mbid(n), ...fields });

// With a label "Tide Records", `tide` is in 5 entities, `pool` in 2, `rare` in 1.
const ARTISTS = [
  artist(1, { name: 'Tide Pool', 'sort-name': 'Pool, Tide' }),
  artist(2, { name: 'Tide Pool Rare', 'sort-name': 'Tide Pool Rare' }),
  artist(3, { name: 'Tide', 'sort-name': 'Tide' }),
  artist(4, { name: 'Tide Again', 'sort-name': 'Tide Again' }),
  // `name` semantics of EntityChange.name: null falls back to `title`, a number is no name.
  artist(5, { name: null, title: 'Odd Title', 'sort-name': 'Nameless Wonder' }),
  artist(6, { name: 42, 'sort-name': 'Numeric Wonder' }),
];

describe('searchHits: what ranks, and the order of what does not (real SQLite file, real archives)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  const options = { commonAbove: 2 };
  const filter = (phrases: string[], slots: number[] | null = null): SearchFilter => ({ phrases, slots });
  const ids = (hits: SearchHit[]) => hits.map((hit) => hit.change.id);
  const id = (n: number) => changeId(20, 'artist', n);
  // FTS5's own bm25 order of a MATCH, best first, equal scores newest first: [id, bm25] pairs.
  const fts5Order = (match: string) =>
    store.sqlite
      .prepare(
        `SELECT rowid, bm25(search_index, 10, 5, 3, 1) AS b FROM search_index WHERE search_index MATCH ?
         ORDER BY b, rowid DESC`,
      )
      .raw()
      .all(match);

  beforeAll(async () => {
    dir = await tempDir('lf-search-queries-');
    store = openStore(join(dir.dir, 'livefeed.db'));
    await storeDump(store, dir.dir, 20, 'artist', ARTISTS);
    await storeDump(store, dir.dir, 20, 'label', [
      JSON.stringify({ id: mbid(7), name: 'Tide Records', 'sort-name': 'Tide Records' }),
    ]);
  }, 60_000);
  afterAll(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('a phrase in more entities than the threshold is common: it does not rank', () => {
    expect(rankingPhrases(store, ['"tide"', '"pool"', '"rare"', '"ti"*', '"none"'], 2)).toEqual([
      '"pool"',
      '"rare"',
      '"none"',
    ]);
    expect(rankingPhrases(store, ['"tide"'], 5)).toEqual(['"tide"']);
  });

  it('a phrase is common above 500 entities, or above 1 in 2,000 of the entities indexed', async () => {
    expect(commonAboveFor(1_000_000)).toBe(COMMON_MIN);
    expect(commonAboveFor(4_000_000)).toBe(2000);
    expect(commonAboveFor(50_000_000)).toBe(25_000);
    expect(commonAboveFor(indexedEntities(store))).toBe(COMMON_MIN);
    // The size follows every commit: counted again once a dump adds an entity.
    expect(indexedEntities(store)).toBe(7);
    await storeDump(store, dir.dir, 21, 'label', [
      JSON.stringify({ id: mbid(8), name: 'Late Label', 'sort-name': 'Late Label' }),
    ]);
    expect(indexedEntities(store)).toBe(8);
    // And once another connection's commit did (a sync beside the server).
    const writer = openStore(store.path);
    try {
      await storeDump(writer, dir.dir, 22, 'label', [
        JSON.stringify({ id: mbid(9), name: 'Later Label', 'sort-name': 'Later Label' }),
      ]);
    } finally {
      writer.close();
    }
    expect(indexedEntities(store)).toBe(9);
  });

  it('when every phrase is common, every hit scores 0 and they come newest change first', () => {
    const hits = searchHits(store, filter(['"tide"']), undefined, 10, options);
    expect(hits.map((hit) => hit.bm25)).toEqual([0, 0, 0, 0, 0]);
    // The label's dump comes after the artists' in its packet (entity slot), so its id is larger.
    expect(ids(hits)).toEqual([changeId(20, 'label', 1), id(4), id(3), id(2), id(1)]);
    expect(searchCount(store, filter(['"tide"']))).toBe(5);
  });

  it('pages of an unranked search seek past the cursor: every hit once, in order', () => {
    const all = ids(searchHits(store, filter(['"ti"*']), undefined, 10, options));
    const seen: number[] = [];
    let after: { bm25: number; id: number } | undefined;
    for (;;) {
      const page = searchHits(store, filter(['"ti"*']), after, 2, options);
      if (page.length === 0) break;
      seen.push(...ids(page));
      after = { bm25: page.at(-1)!.bm25, id: page.at(-1)!.change.id };
    }
    expect(seen).toEqual(all);
    // Every "Tide" (an artist's `title` is not indexed, so "Odd Title" is not among them).
    expect(all).toHaveLength(5);
  });

  it('an entity type filter keeps to its types in the unranked order too', () => {
    const slots = [entitySlot('label')];
    expect(ids(searchHits(store, filter(['"tide"'], slots), undefined, 10, options))).toEqual([
      changeId(20, 'label', 1),
    ]);
  });

  it('common phrases must match but count 0: the score is the bm25 of the ranking phrases alone', () => {
    const mixed = searchHits(store, filter(['"tide"', '"pool"']), undefined, 10, options);
    expect(mixed.map((hit) => [hit.change.id, hit.bm25])).toEqual(fts5Order('"pool"'));
    expect(mixed.every((hit) => hit.bm25 < 0)).toBe(true);
    // Hits of a ranking phrase that miss a common phrase are not hits.
    expect(ids(searchHits(store, filter(['"tide"', '"wonder"']), undefined, 10, options))).toEqual([]);
    const rare = searchHits(store, filter(['"tide"', '"rare"']), undefined, 10, options);
    expect(rare.map((hit) => [hit.change.id, hit.bm25])).toEqual(fts5Order('"rare"'));
  });

  it('with every phrase rare, the score is bm25 over all of them, as FTS5 ranks the whole search', () => {
    const ranked = searchHits(store, filter(['"tide"', '"pool"']), undefined, 10, { commonAbove: 10 });
    expect(ranked.map((hit) => [hit.change.id, hit.bm25])).toEqual(fts5Order('"tide" "pool"'));
  });

  it('a cursor of a ranked page, read once the phrases are common, starts the unranked hits over', () => {
    const ranked = searchHits(store, filter(['"tide"']), undefined, 1, { commonAbove: 10 });
    const after = { bm25: ranked[0]!.bm25, id: ranked[0]!.change.id };
    expect(after.bm25).toBeLessThan(0);
    expect(searchHits(store, filter(['"tide"']), after, 10, options)).toHaveLength(5);
    expect(searchHits(store, filter(['"tide"']), { bm25: 1, id: id(1) }, 10, options)).toEqual([]);
  });

  it('hits carry the name EntityChange.name gives: name, else title; null when neither is a string', () => {
    const nameOf = (phrases: string[]) =>
      searchHits(store, filter(phrases), undefined, 10).map((hit) => hit.change.name);
    expect(nameOf(['"tide"', '"again"'])).toEqual(['Tide Again']);
    expect(nameOf(['"nameless"'])).toEqual(['Odd Title']);
    expect(nameOf(['"numeric"'])).toEqual([null]);
  });

  it('names come from the column the ingest fills, and from the line where it is not known', () => {
    const stored = store.sqlite.prepare('SELECT name FROM changes WHERE id = ?').pluck();
    expect([1, 4, 5, 6].map((n) => stored.get(id(n)))).toEqual([
      'Tide Pool',
      'Tide Again',
      'Odd Title',
      Buffer.alloc(0),
    ]);
    const nameOf = (phrases: string[]) =>
      searchHits(store, filter(phrases), undefined, 10).map((hit) => hit.change.name);
    const before = [nameOf(['"tide"', '"again"']), nameOf(['"nameless"']), nameOf(['"numeric"'])];
    // A line stored before migration 0011 (NULL: not known) is named from its JSON.
    store.sqlite.prepare("UPDATE changes SET name = NULL WHERE entity = 'artist'").run();
    expect([nameOf(['"tide"', '"again"']), nameOf(['"nameless"']), nameOf(['"numeric"'])]).toEqual(before);
    expect(before).toEqual([['Tide Again'], ['Odd Title'], [null]]);
    // The column is what is read when known: a name the line does not hold shows.
    store.sqlite.prepare('UPDATE changes SET name = ? WHERE id = ?').run('From the column', id(4));
    expect(nameOf(['"tide"', '"again"'])).toEqual(['From the column']);
  });

  it('hits read their lines only when asked: the stored bytes, once; a line gone since is named', () => {
    const [hit] = searchHits(store, filter(['"tide"', '"again"']), undefined, 10);
    const stored = store.sqlite.prepare('SELECT CAST(data AS BLOB) FROM changes WHERE id = ?').pluck();
    expect(hit!.change.data).toEqual(stored.get(hit!.change.id));
    expect(JSON.parse(hit!.change.data.toString()).name).toBe('Tide Again');
    expect(hit!.change.data).toBe(hit!.change.data);
    // A hit whose line was pruned between the search and the read of its bytes: a clear error.
    const [gone] = searchHits(store, filter(['"tide"', '"pool"', '"rare"']), undefined, 10);
    const id = gone!.change.id;
    store.sqlite.transaction(() => {
      store.sqlite.prepare('DELETE FROM search_index WHERE rowid = ?').run(id);
      store.sqlite.prepare('DELETE FROM changes WHERE id = ?').run(id);
    })();
    expect(() => gone!.change.data).toThrow(`change ${id} of ${mbid(2)} is no longer held`);
  });
});

describe('rankingPhrases remembers its verdicts until the next commit (real SQLite file, real archives)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;

  beforeAll(async () => {
    dir = await tempDir('lf-search-verdicts-');
    store = openStore(join(dir.dir, 'livefeed.db'));
    await storeDump(store, dir.dir, 20, 'artist', ARTISTS);
  }, 60_000);
  afterAll(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('a phrase grown common by a commit, this connection’s or another’s, stops ranking at once', async () => {
    // `pool` is in 2 entities: it ranks under a threshold of 2, and again when asked again.
    expect(rankingPhrases(store, ['"pool"', '"wonder"'], 2)).toEqual(['"pool"', '"wonder"']);
    expect(rankingPhrases(store, ['"pool"', '"wonder"'], 2)).toEqual(['"pool"', '"wonder"']);
    // The same phrase under another threshold is its own verdict.
    expect(rankingPhrases(store, ['"pool"'], 1)).toEqual([]);
    await storeDump(store, dir.dir, 21, 'label', [
      JSON.stringify({ id: mbid(7), name: 'Pool Records', 'sort-name': 'Pool Records' }),
    ]);
    expect(rankingPhrases(store, ['"pool"', '"wonder"'], 2)).toEqual(['"wonder"']);
    const writer = openStore(store.path);
    try {
      await storeDump(writer, dir.dir, 22, 'label', [
        JSON.stringify({ id: mbid(8), name: 'Wonder Label', 'sort-name': 'Wonder Label' }),
      ]);
    } finally {
      writer.close();
    }
    expect(rankingPhrases(store, ['"pool"', '"wonder"'], 2)).toEqual([]);
    // And what searchHits ranks follows: `pool` and `wonder` are both common now, so hits score 0.
    const hits = searchHits(store, { phrases: ['"pool"'], slots: null }, undefined, 10, { commonAbove: 2 });
    expect(hits.map((hit) => hit.bm25)).toEqual([0, 0, 0]);
  });
});

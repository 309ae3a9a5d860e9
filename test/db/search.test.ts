import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Store } from '../../src/db/client.js';
import { changeId, entitySlot } from '../../src/db/keys.js';
import { sqliteReads } from '../../src/db/reads.js';
import type { SearchHit, SearchKey, SearchOptions } from '../../src/db/searchQueries.js';
import type { EntityType } from '../../src/feed/entities.js';
import { searchPhrases } from '../../src/graphql/searchSyntax.js';
import { describeReadStores } from '../support/readStores.js';
import { currentIds, indexedIds, PAGING_FILLERS, SEARCH } from '../support/searchFeed.js';
import { fillSearchStory, indexedIdsPostgres, type SearchStores } from '../support/searchStores.js';

// The search story (test/support/searchFeed.ts) stored on each store from the same real archives;
// the same searches find the same entities. Tokenizer differences: test/db/searchTokens.test.ts.

const folded = (n: number) => `e2000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** Artists named with letters Unicode does not decompose, which PostgreSQL's unaccent spells out. */
const FOLDED = {
  royksopp: folded(1),
  lodz: folded(2),
  mo: folded(3),
  strasse: folded(4),
  aether: folded(5),
};
const FOLDED_LINES = [
  { id: FOLDED.royksopp, name: 'Røyksopp', 'sort-name': 'Røyksopp' },
  { id: FOLDED.lodz, name: 'Łódź', 'sort-name': 'Łódź', disambiguation: 'ﬂoating city' },
  { id: FOLDED.mo, name: 'MØ', 'sort-name': 'MØ' },
  { id: FOLDED.strasse, name: 'Straße', 'sort-name': 'Straße' },
  { id: FOLDED.aether, name: 'Æther Realm', 'sort-name': 'Æther Realm' },
].map((line) => JSON.stringify(line));

const rare = (n: number) => `e3000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/**
 * Labels where a rarer word must outrank a common one (README, Search: rarer words weigh more):
 * "zephyr" in 2 entities, "common" in 42; each of the two things has one in its name and the other
 * in its disambiguation.
 */
const RARE_LINES = [
  ...Array.from({ length: 40 }, (_, i) => ({ id: rare(100 + i), name: `Common Plain ${i}` })),
  { id: rare(1), name: 'Zephyr Thing', disambiguation: 'common' },
  { id: rare(2), name: 'Common Thing', disambiguation: 'zephyr' },
].map((line) => JSON.stringify(line));

describeReadStores('search over the current state', (kind, store) => {
  let stores: SearchStores;
  let twin: Store;
  beforeAll(async () => {
    stores = await fillSearchStory(store());
    twin = stores.twin;
    await stores.dump(14, 'artist', FOLDED_LINES);
    await stores.dump(14, 'label', RARE_LINES);
  }, 90_000);
  afterAll(() => {
    if (twin !== store().sqlite) twin?.close();
  });

  /** Hits of a query as a user types it (graphql/searchSyntax.ts), of the given entity types. */
  const search = (
    query: string,
    entities?: EntityType[],
    limit = 500,
    after?: SearchKey,
    options?: SearchOptions,
  ) =>
    store().reads.search(
      { phrases: searchPhrases(query), slots: entities ? entities.map(entitySlot) : null },
      after,
      limit,
      options,
    );
  const mbids = async (query: string, entities?: EntityType[]) =>
    (await search(query, entities)).map((h) => h.change.mbid);
  const set = async (query: string, entities?: EntityType[]) => (await mbids(query, entities)).sort();
  const GROSSE = [SEARCH.grosse, SEARCH.label, SEARCH.recording].sort();
  const indexed = async () => (kind === 'sqlite' ? indexedIds(twin) : indexedIdsPostgres(store().postgres!));

  it('holds one entry per current entity, keyed by its newest change id', async () => {
    expect(await indexed()).toEqual(currentIds(twin));
  });

  it('ignores case and diacritics: `grosse boite` finds "Grosse Boîte" in names and titles', async () => {
    expect(await set('grosse boite ')).toEqual(GROSSE);
    expect(await set('GROSSE BOÎTE ')).toEqual(GROSSE);
    expect(await set('Lumiere ')).toEqual(await set('lumière '));
  });

  it('folds letters Unicode does not decompose as unaccent does: "royksopp" finds "Røyksopp"', async () => {
    for (const query of ['royksopp ', 'Røyksopp ', 'ROYKSOPP ', 'royk', 'røyk', 'RØYK']) {
      expect({ query, hits: await mbids(query) }).toEqual({ query, hits: [FOLDED.royksopp] });
    }
    for (const query of ['lodz ', 'Łódź ', 'łodz ', 'lod', '"floating city"', 'ﬂoat']) {
      expect({ query, hits: await mbids(query) }).toEqual({ query, hits: [FOLDED.lodz] });
    }
    for (const query of ['mo ', 'MØ ', 'mø ', '"mo"']) {
      expect({ query, hits: await mbids(query) }).toEqual({ query, hits: [FOLDED.mo] });
    }
    for (const query of ['strasse ', 'Straße ', 'STRAẞE ', 'strass', 'straß']) {
      expect({ query, hits: await mbids(query) }).toEqual({ query, hits: [FOLDED.strasse] });
    }
    for (const query of ['aether ', 'Æther ', 'æther realm ', '"aether realm"', 'aeth', 'æth']) {
      expect({ query, hits: await mbids(query) }).toEqual({ query, hits: [FOLDED.aether] });
    }
    // A folded letter is spelt out, not dropped: "Røyksopp" is not "ryksopp".
    expect(await mbids('ryksopp ')).toEqual([]);
  });

  it('matches the last word as a prefix while typing, not once it is followed by a space', async () => {
    expect(await set('gros')).toEqual(GROSSE);
    expect(await set('grosse bo')).toEqual(GROSSE);
    expect(await set('gros ')).toEqual([]);
    expect(await set('"gros"')).toEqual([]);
  });

  it('a phrase in quotes matches its words side by side, in order, within one column', async () => {
    expect(await set('"grosse boite"')).toEqual(GROSSE);
    // The sort name "Boîte, Grosse" of the artist alone.
    expect(await mbids('"boite grosse"')).toEqual([SEARCH.grosse]);
    expect(await mbids('"boite records"')).toEqual([SEARCH.label]);
    expect(await mbids('"grosse records"')).toEqual([]);
  });

  it('keeps to the entity types asked for', async () => {
    expect(await mbids('grosse ', ['label'])).toEqual([SEARCH.label]);
    expect(await set('grosse ', ['artist', 'recording'])).toEqual([SEARCH.grosse, SEARCH.recording].sort());
    expect(await mbids('grosse ', ['work'])).toEqual([]);
  });

  it('finds aliases (names and sort names) and disambiguations, ranked name, then alias, then disambiguation', async () => {
    expect(await mbids('lumiere ')).toEqual([SEARCH.byName, SEARCH.byAlias, SEARCH.byDisambiguation]);
    expect(await mbids('collective ')).toEqual([SEARCH.byAlias]);
    expect(await mbids('tribute ')).toEqual([SEARCH.byDisambiguation]);
    const scores = (await search('lumiere ')).map((hit) => hit.bm25);
    expect(scores[0]).toBeLessThan(scores[1]!);
    expect(scores[1]).toBeLessThan(scores[2]!);
  });

  it('a rarer word weighs more: its hit in a name outranks the common word’s', async () => {
    const hits = await search('zephyr common ');
    expect(hits.map((hit) => hit.change.mbid)).toEqual([rare(1), rare(2)]);
    expect(hits[0]!.bm25).toBeLessThan(hits[1]!.bm25);
    expect((await search('common zephyr ')).map((hit) => hit.change.mbid)).toEqual([rare(1), rare(2)]);
    // The weights move only with the entities a phrase is in: an ANALYZE between two pages (which
    // changes PostgreSQL's size estimate) leaves the cursor on its hit.
    const [first] = await search('zephyr common ', undefined, 1);
    if (kind === 'postgres') await store().postgres!.pool.query('ANALYZE search_index');
    const next = await search('zephyr common ', undefined, 1, { bm25: first!.bm25, id: first!.change.id });
    expect(next.map((hit) => hit.change.mbid)).toEqual([rare(2)]);
  });

  it('finds the current version only: a replaced name is gone, a deleted or merged entity too', async () => {
    expect(await mbids('old moniker ')).toEqual([]);
    const renamed = await search('new moniker ');
    expect(renamed.map((hit) => [hit.change.mbid, hit.change.id, hit.change.name])).toEqual([
      [SEARCH.renamed, changeId(11, 'artist', 1), 'New Moniker'],
    ]);
    expect(await mbids('doomed ')).toEqual([]);
    expect(await mbids('absorbed ')).toEqual([]);
    expect(await store().reads.searchCount({ phrases: searchPhrases('ensemble '), slots: null })).toBe(0);
  });

  it('FTS5 syntax characters in a query are text', async () => {
    expect(await mbids('near -minus ')).toEqual([SEARCH.syntax]);
    expect(await mbids('"say hi" *')).toEqual([SEARCH.syntax]);
  });

  it('pages with cursors give every hit exactly once, in the order of one page, and count them', async () => {
    const all = await search('paging filler ');
    expect(all).toHaveLength(PAGING_FILLERS);
    const seen: SearchHit[] = [];
    let after: SearchKey | undefined;
    for (;;) {
      const page = await search('paging filler ', undefined, 7, after);
      if (page.length === 0) break;
      seen.push(...page);
      after = { bm25: page.at(-1)!.bm25, id: page.at(-1)!.change.id };
    }
    expect(seen.map((hit) => hit.change.id)).toEqual(all.map((hit) => hit.change.id));
    expect(new Set(seen.map((hit) => hit.change.mbid)).size).toBe(PAGING_FILLERS);
    // Ranked order: ascending bm25 (PostgreSQL: negated ts_rank), then newest change first.
    for (let i = 1; i < all.length; i++) {
      const [a, b] = [all[i - 1]!, all[i]!];
      expect(a.bm25 < b.bm25 || (a.bm25 === b.bm25 && a.change.id > b.change.id)).toBe(true);
    }
    expect(await store().reads.searchCount({ phrases: searchPhrases('paging filler '), slots: null })).toBe(
      PAGING_FILLERS,
    );
    await expect(async () => search('paging ', undefined, -1)).rejects.toThrow(RangeError);
  });

  it('when every word is common, every hit scores 0, newest first, and pages seek past the cursor', async () => {
    const options = { commonAbove: 2 };
    const all = await search('filler ', undefined, 500, undefined, options);
    expect(all.map((hit) => hit.bm25)).toEqual(all.map(() => 0));
    const ids = all.map((hit) => hit.change.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const second = await search('filler ', undefined, 10, { bm25: 0, id: ids[9]! }, options);
    expect(second.map((hit) => hit.change.id)).toEqual(ids.slice(10, 20));
    expect(await search('filler ', undefined, 10, { bm25: 1, id: ids[0]! }, options)).toEqual([]);
    // A common word must still match, but only the rare one ranks.
    const mixed = await search('filler 7 ', undefined, 500, undefined, options);
    expect(mixed.map((hit) => hit.change.name)).toEqual(['Paging Filler 7']);
    expect(mixed[0]!.bm25).toBeLessThan(0);
  });

  if (kind === 'postgres') {
    it('finds the same entities as the SQLite store of the same archives, for every word of the story', async () => {
      const reference = sqliteReads(twin);
      const words = [
        'grosse',
        'boîte',
        'gro',
        'lumière',
        'collective',
        'tribute',
        'band',
        'moniker',
        'paging 4',
        'filler',
        'records',
        'song',
        'near',
        'say',
        'ensemble',
        'kind of light',
        '"quiet band"',
        'zzz',
        'royksopp',
        'røyk',
        'łódź',
        'lodz',
        'mø',
        'mo',
        'straße',
        'strasse',
        'æther realm',
        'aether',
        'ﬂoating',
      ];
      for (const query of words) {
        for (const entities of [undefined, ['artist'], ['label', 'recording']] as EntityType[][]) {
          const filter = { phrases: searchPhrases(query), slots: entities ? entities.map(entitySlot) : null };
          const [pg, sqlite] = await Promise.all([
            store().reads.search(filter, undefined, 500),
            reference.search(filter, undefined, 500),
          ]);
          const found = (hits: SearchHit[]) =>
            hits.map((hit) => [hit.change.mbid, hit.change.id, hit.change.name]).sort();
          expect({ query, entities, hits: found(pg) }).toEqual({ query, entities, hits: found(sqlite) });
          expect(await store().reads.searchCount(filter)).toBe(sqlite.length);
        }
      }
    });
  }

  it('a JSON dump stored again: the versions its earlier copy had replaced are found again', async () => {
    await stores.dump(11, 'artist', [
      JSON.stringify({ id: SEARCH.byName, name: 'Lumière Again', 'sort-name': 'Lumière Again' }),
    ]);
    expect(await mbids('old moniker ')).toEqual([SEARCH.renamed]);
    expect(await mbids('new moniker ')).toEqual([]);
    expect((await search('lumiere again ')).map((hit) => hit.change.id)).toEqual([changeId(11, 'artist', 1)]);
    expect(await indexed()).toEqual(currentIds(twin));
  });

  it('a replication packet stored again: the entities only its earlier copy removed are found again', async () => {
    await stores.removals(12, { deleted: [SEARCH.deleted] });
    expect(await mbids('absorbed ')).toEqual([SEARCH.merged]);
    expect(await mbids('doomed ')).toEqual([]);
    await stores.removals(13, { merged: [SEARCH.merged] });
    expect(await mbids('absorbed ')).toEqual([]);
    expect(await indexed()).toEqual(currentIds(twin));
  });
});

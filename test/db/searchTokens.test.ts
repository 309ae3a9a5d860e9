import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Store } from '../../src/db/client.js';
import { changeId, dumpIdRange } from '../../src/db/keys.js';
import { INDEX_COLUMNS } from '../../src/db/searchIndex.js';
import { searchPhrases } from '../../src/graphql/searchSyntax.js';
import { describeReadStores } from '../support/readStores.js';
import { currentIds } from '../support/searchFeed.js';
import { fillSearchStory, indexedIdsPostgres, type SearchStores } from '../support/searchStores.js';

// What each store reads from a line and how it cuts it into words. The columns are the same text
// (FIELD_COLUMNS) but for the documented cases; the words differ where PostgreSQL's parser does
// (docs/POSTGRES_PORT.md, Search).

const mbid = (n: number) => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const entity = (n: number, fields: Record<string, unknown>) => JSON.stringify({ id: mbid(n), ...fields });

/** Artists whose names PostgreSQL's parser alone would cut otherwise than FTS5's unicode61. */
const TOKENS = [
  entity(1, { name: 'AC/DC', 'sort-name': 'AC/DC' }),
  entity(2, { name: 'Jay Z', 'sort-name': 'Jay Z' }),
  entity(3, { name: "B-52's", 'sort-name': "B-52's" }),
  entity(4, { name: "Don't Stop", 'sort-name': "Don't Stop" }),
  entity(5, { name: 'Ænima Band', 'sort-name': 'Ænima Band' }),
  entity(21, { name: 'Cocteau Twins/Harold Budd' }),
  entity(22, { name: 'R.E.M.' }),
  entity(23, { name: '3.14159 Pi' }),
  entity(24, { name: 'foo@bar.com' }),
  entity(25, { name: 'www.example.com' }),
  entity(26, { name: '+4477' }),
];

/** Works (titled) with values that are not strings, written as JSON text where JSON.stringify cannot. */
const ODD = [
  entity(11, {
    title: 42,
    name: 'Not The Title',
    'sort-name': true,
    disambiguation: false,
    aliases: [
      { name: 7, 'sort-name': 7 },
      { name: '7', 'sort-name': 7 },
      { name: true, 'sort-name': 1 },
      'not an object',
      null,
      { name: 'Same', 'sort-name': 'Same' },
      { name: 'Only Name' },
      { 'sort-name': 'Only Sort' },
      { name: null, 'sort-name': null },
    ],
  }),
  `{"id":"${mbid(12)}","title":"Caf\\u00e9 \\"Q\\" \\\\ back","sort-name":null,"aliases":{},"disambiguation":-12}`,
  entity(13, { title: 1.5, aliases: [], disambiguation: '' }),
  entity(14, { title: 'No Aliases', aliases: [{ locale: 'en' }] }),
  // Documented differences: a real written with an exponent, an object value.
  `{"id":"${mbid(15)}","title":"Exponent","disambiguation":1e3}`,
  entity(16, { title: 'Object Work', disambiguation: { zeta: 'last', alpha: 'first' } }),
  // Escapes jsonb refuses: indexed with a space in their place on PostgreSQL, never a failed dump.
  `{"id":"${mbid(17)}","title":"Nul\\u0000Byte Work"}`,
  `{"id":"${mbid(18)}","title":"Lone \\ud800 Surrogate Work"}`,
];

describeReadStores('search words', (kind, store) => {
  let stores: SearchStores;
  let twin: Store;
  beforeAll(async () => {
    stores = await fillSearchStory(store());
    twin = stores.twin;
    await stores.dump(20, 'artist', TOKENS);
    await stores.dump(20, 'work', ODD);
  }, 90_000);
  afterAll(() => {
    if (twin !== store().sqlite) twin?.close();
  });

  const mbids = async (query: string) =>
    (await store().reads.search({ phrases: searchPhrases(query), slots: null }, undefined, 500)).map(
      (hit) => hit.change.mbid,
    );

  it("slashes, hyphens, dots, @ and + separate words in both (PostgreSQL's parser alone keeps paths, hosts, emails and numbers whole)", async () => {
    expect(await mbids('ac/dc ')).toEqual([mbid(1)]);
    expect(await mbids('ac')).toEqual([mbid(1)]);
    expect(await mbids('dc ')).toEqual([mbid(1)]);
    expect(await mbids('b-52 ')).toEqual([mbid(3)]);
    expect(await mbids('52 ')).toEqual([mbid(3)]);
    expect(await mbids('jay z ')).toEqual([mbid(2)]);
    expect(await mbids('jay-z ')).toEqual([mbid(2)]);
    for (const [query, n] of [
      ['harold ', 21],
      ['cocteau twins ', 21],
      ['r e m ', 22],
      ['r.e.m. ', 22],
      ['14159 ', 23],
      ['3.14159 ', 23],
      ['bar ', 24],
      ['example ', 25],
      ['4477 ', 26],
    ] as const)
      expect(await mbids(query), query).toEqual([mbid(n)]);
  });

  it('apostrophes split words in both', async () => {
    expect(await mbids("don't ")).toEqual([mbid(4)]);
    expect(await mbids('don ')).toEqual([mbid(4)]);
    expect(await mbids('"b 52 s"')).toEqual([mbid(3)]);
  });

  it('a phrase may run from one column into the next in PostgreSQL, never in FTS5', async () => {
    // "Ænima Band" then its sort name "Ænima Band": the last word of one and the first of the next.
    expect(await mbids('"band aenima"')).toEqual(kind === 'sqlite' ? [] : [mbid(5)]);
    expect(await mbids('"band ænima"')).toEqual(kind === 'sqlite' ? [] : [mbid(5)]);
  });

  it('ligatures are spelt out in both (Æ as AE): unaccent does, and SQLite folds as it does', async () => {
    expect(await mbids('ænima ')).toEqual([mbid(5)]);
    expect(await mbids('aenima ')).toEqual([mbid(5)]);
  });

  it('lines with escapes jsonb refuses are stored and found by their other words', async () => {
    expect(await mbids('surrogate ')).toEqual([mbid(18)]);
    expect(await mbids('byte work ')).toEqual([mbid(17)]);
    expect(await mbids('object work first ')).toEqual([mbid(16)]);
  });

  if (kind === 'postgres') {
    it('indexes the columns FIELD_COLUMNS gives on SQLite, non-string values included', async () => {
      const [first, last] = dumpIdRange(20, 'work');
      const sqlite = twin.sqlite
        .prepare(
          `WITH f (id, n, s, a, d) AS (SELECT ${INDEX_COLUMNS} FROM changes c WHERE c.id BETWEEN ? AND ?)
           SELECT id, CAST(n AS TEXT), CAST(s AS TEXT), CAST(a AS TEXT), CAST(d AS TEXT) FROM f ORDER BY id`,
        )
        .raw()
        .all(first, last) as unknown[][];
      const { rows } = await store().postgres!.pool.query({
        text: `SELECT id, name, sort_name, aliases, disambiguation FROM search_index
          WHERE id BETWEEN $1 AND $2 ORDER BY id`,
        values: [first, last],
        rowMode: 'array',
      });
      const differ = [15, 16, 17, 18].map((n) =>
        changeId(20, 'work', ODD.findIndex((l) => l.includes(mbid(n))) + 1),
      );
      const same = (all: unknown[][]) => all.filter((row) => !differ.includes(row[0] as number));
      expect(same(rows)).toEqual(same(sqlite));
      expect(same(rows)).toHaveLength(ODD.length - differ.length);
      expect(rows[0]).toEqual([changeId(20, 'work', 1), '42', '1', '7 7 7 1 Same Only Name Only Sort', '0']);
      // The documented differences: jsonb's decimal text and its text of an object.
      const byId = new Map(rows.map((row) => [row[0], row]));
      const sqliteById = new Map(sqlite.map((row) => [row[0], row]));
      expect([byId.get(differ[0])![4], sqliteById.get(differ[0])![4]]).toEqual(['1000', '1000.0']);
      expect([byId.get(differ[1])![4], sqliteById.get(differ[1])![4]]).toEqual([
        '{"zeta": "last", "alpha": "first"}',
        '{"zeta":"last","alpha":"first"}',
      ]);
      expect(byId.get(differ[2])![1]).toBe('Nul Byte Work');
      expect(await indexedIdsPostgres(store().postgres!)).toEqual(currentIds(twin));
    });
  }
});

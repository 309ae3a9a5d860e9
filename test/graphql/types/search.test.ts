import { expect, it } from 'vitest';
import { COMMON_MIN } from '../../../src/db/searchCommon.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { describeAppStores } from '../../support/appStores.js';
import { gql } from '../../support/harness.js';
import {
  buildSearchStory,
  PAGING_FILLERS,
  pagingFiller,
  SEARCH,
  storeDump,
} from '../../support/searchFeed.js';

// Areas "Crowd Town N" (one more than COMMON_MIN: the index is small) and "Crowd Special":
// `crowd` is common.
const CROWD = COMMON_MIN + 1;
const crowdMbid = (n: number) => `a1000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const SPECIAL = 'a2000000-0000-4000-8000-000000000001';
const NAMELESS = 'a2000000-0000-4000-8000-000000000002';
const NUMERIC = 'a2000000-0000-4000-8000-000000000003';
const CROWD_LINES = [
  ...Array.from({ length: CROWD }, (_, n) => JSON.stringify({ id: crowdMbid(n), name: `Crowd Town ${n}` })),
  JSON.stringify({ id: SPECIAL, name: 'Crowd Special' }),
];
// EntityChange.name: `name`, else `title`; null when neither is a string.
const ODD_NAMES = [
  JSON.stringify({ id: NAMELESS, name: null, title: 'Odd Title', 'sort-name': 'Nameless Wonder' }),
  JSON.stringify({ id: NUMERIC, name: 42, 'sort-name': 'Numeric Wonder' }),
];

// Names with letters Unicode does not decompose, which both stores fold as unaccent does.
const ROYKSOPP = 'a2000000-0000-4000-8000-000000000004';
const STRASSE = 'a2000000-0000-4000-8000-000000000005';
const FOLDED_NAMES = [
  JSON.stringify({ id: ROYKSOPP, name: 'Røyksopp', 'sort-name': 'Røyksopp' }),
  JSON.stringify({ id: STRASSE, name: 'Straße', 'sort-name': 'Straße' }),
];

// The same word in a short and a long name, the long one stored after (a higher change id): bm25
// ranks the shorter document first, whatever the order of storing.
const SHORT_NAME = 'a2000000-0000-4000-8000-000000000006';
const LONG_NAME = 'a2000000-0000-4000-8000-000000000007';
const LENGTH_NAMES = [
  JSON.stringify({ id: SHORT_NAME, name: 'Zephyrine', 'sort-name': 'Zephyrine' }),
  JSON.stringify({
    id: LONG_NAME,
    name: 'Zephyrine and the Orchestra of the Northern Lights',
    'sort-name': 'Zephyrine and the Orchestra of the Northern Lights',
  }),
];

const SEARCH_QUERY = `query($q: String!, $e: [EntityType!], $first: Int, $after: String) {
  search(query: $q, entities: $e, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage endCursor }
    edges { cursor score node { mbid type latest { packet name } } }
    nodes { mbid }
  }
}`;

/** The search story, the crowd of areas and the odd names, through either store's sync writer. */
async function build(writer: SyncStore, dir: string): Promise<void> {
  await buildSearchStory(writer, dir);
  await storeDump(writer, dir, 13, 'area', CROWD_LINES);
  await storeDump(writer, dir, 13, 'artist', ODD_NAMES);
  await storeDump(writer, dir, 14, 'artist', FOLDED_NAMES);
  await storeDump(writer, dir, 15, 'artist', LENGTH_NAMES);
}

describeAppStores('search over the current state (yoga.fetch, real archives)', build, (_kind, run) => {
  const search = (q: string, more: Record<string, unknown> = {}) =>
    gql(run().app, SEARCH_QUERY, { q, ...more });
  const mbidsOf = async (q: string, more: Record<string, unknown> = {}) => {
    const answer = await search(q, more);
    expect(answer.errors).toBeUndefined();
    return answer.data!.search.nodes.map((n: { mbid: string }) => n.mbid) as string[];
  };
  const errorOf = async (q: string, more: Record<string, unknown> = {}) => {
    const answer = await search(q, more);
    expect(answer.data).toBeNull();
    return answer.errors![0]!;
  };

  it('folds letters as unaccent does: royksopp and røyk find "Røyksopp", named as it is written', async () => {
    for (const q of ['royksopp', 'røyk', 'ROYK', 'Røyksopp ']) expect(await mbidsOf(q)).toEqual([ROYKSOPP]);
    for (const q of ['strasse ', 'straße', 'STRAẞE ']) expect(await mbidsOf(q)).toEqual([STRASSE]);
    const answer = await search('royksopp ');
    expect(answer.data!.search.edges[0].node.latest.name).toBe('Røyksopp');
  });

  it('ignores case and diacritics: grosse boite finds "Grosse Boîte" of every entity type, names and titles', async () => {
    const expected = [SEARCH.grosse, SEARCH.label, SEARCH.recording].sort();
    expect((await mbidsOf('grosse boite ')).sort()).toEqual(expected);
    expect((await mbidsOf('GROSSE BOÎTE ')).sort()).toEqual(expected);
    const answer = await search('grosse boite song');
    expect(answer.data!.search.edges).toEqual([
      {
        cursor: expect.any(String),
        score: expect.any(Number),
        node: {
          mbid: SEARCH.recording,
          type: 'RECORDING',
          latest: { packet: 10, name: 'Grosse Boîte Song' },
        },
      },
    ]);
  });

  it('ranks a shorter name above a longer one with the same word, as bm25 does, on both stores', async () => {
    expect(await mbidsOf('zephyrine')).toEqual([SHORT_NAME, LONG_NAME]);
    expect(await mbidsOf('zephyrine ')).toEqual([SHORT_NAME, LONG_NAME]);
    const [short, long] = (await search('zephyrine')).data!.search.edges as { score: number }[];
    expect(short!.score).toBeGreaterThan(long!.score);
  });

  it('matches the last word as a prefix, unless the query ends in a space or it is a quoted phrase', async () => {
    expect(await mbidsOf('lumi')).toHaveLength(3);
    expect(await mbidsOf('grosse bo')).toHaveLength(3);
    expect(await mbidsOf('lumi ')).toEqual([]);
    expect(await mbidsOf('"lumi"')).toEqual([]);
    // Only the last word is a prefix.
    expect(await mbidsOf('gros boite')).toEqual([]);
    expect(await mbidsOf('"grosse boite" rec')).toEqual([SEARCH.label]);
  });

  it('ranks a name above an alias above a disambiguation; scores are positive and fall', async () => {
    const answer = await search('lumiere');
    const edges = answer.data!.search.edges as { score: number; node: { mbid: string } }[];
    expect(edges.map((e) => e.node.mbid)).toEqual([SEARCH.byName, SEARCH.byAlias, SEARCH.byDisambiguation]);
    expect(edges[0]!.score).toBeGreaterThan(edges[1]!.score);
    expect(edges[1]!.score).toBeGreaterThan(edges[2]!.score);
    expect(edges[2]!.score).toBeGreaterThan(0);
    // Issue 15: "Nodes are `Entity` with a `score`": the same relevance on the nodes, null elsewhere.
    const nodes = await gql(run().app, '{ search(query: "lumiere") { nodes { mbid score } } }');
    expect(nodes.data!.search.nodes).toEqual(edges.map((e) => ({ mbid: e.node.mbid, score: e.score })));
    const entity = await gql(run().app, `{ entity(mbid: "${SEARCH.byName}") { score } }`);
    expect(entity.data!.entity).toEqual({ score: null });
  });

  it('finds aliases by name and by sort name, and sort names', async () => {
    expect(await mbidsOf('lumiere collective')).toEqual([SEARCH.byAlias]);
    expect(await mbidsOf('collective, lumiere')).toEqual([SEARCH.byAlias]);
    expect(await mbidsOf('filler 7, pagin')).toEqual([pagingFiller(7)]);
  });

  it('filters by entity type', async () => {
    expect(await mbidsOf('grosse', { e: ['LABEL'] })).toEqual([SEARCH.label]);
    expect((await mbidsOf('grosse', { e: ['LABEL', 'RECORDING'] })).sort()).toEqual(
      [SEARCH.label, SEARCH.recording].sort(),
    );
    expect(await mbidsOf('grosse', { e: ['WORK'] })).toEqual([]);
    expect(await mbidsOf('grosse', { e: ['ARTIST'] })).toEqual([SEARCH.grosse]);
    expect(await mbidsOf('grosse', { e: [] })).toHaveLength(3);
  });

  it('finds a replaced entity by its new name only, and never a deleted or merged one', async () => {
    expect(await mbidsOf('old moniker')).toEqual([]);
    const answer = await search('new moniker');
    expect(answer.data!.search.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { mbid: SEARCH.renamed, type: 'ARTIST', latest: { packet: 11, name: 'New Moniker' } },
    ]);
    expect(await mbidsOf('doomed')).toEqual([]);
    expect(await mbidsOf('absorbed ensemble')).toEqual([]);
    expect(await mbidsOf('ensemble')).toEqual([]);
  });

  it('pages with opaque cursors, default 20, to the last hit exactly once', async () => {
    const first = await search('paging filler');
    expect(first.data!.search.totalCount).toBe(PAGING_FILLERS);
    expect(first.data!.search.nodes).toHaveLength(20);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = (await search('paging filler', { first: 10, after })).data!.search;
      seen.push(...page.nodes.map((n: { mbid: string }) => n.mbid));
      expect(page.pageInfo.hasPreviousPage).toBe(after !== undefined);
      pages++;
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages).toBe(5);
    expect(new Set(seen).size).toBe(PAGING_FILLERS);
    expect(seen.sort()).toEqual(Array.from({ length: PAGING_FILLERS }, (_, i) => pagingFiller(i)).sort());
  });

  it('refuses a cursor of another search, of another connection, or garbage (BAD_CURSOR)', async () => {
    const cursor = (await search('paging filler', { first: 2 })).data!.search.pageInfo.endCursor;
    expect((await errorOf('paging fillers', { after: cursor })).extensions?.code).toBe('BAD_CURSOR');
    expect((await errorOf('paging filler', { after: cursor, e: ['ARTIST'] })).extensions?.code).toBe(
      'BAD_CURSOR',
    );
    expect((await errorOf('paging filler', { after: 'bm90IGEgY3Vyc29y' })).extensions?.code).toBe(
      'BAD_CURSOR',
    );
    const changes = await gql(
      run().app,
      '{ changes(packet: 10, entity: ARTIST, first: 1) { pageInfo { endCursor } } }',
    );
    const foreign = changes.data!.changes.pageInfo.endCursor;
    expect((await errorOf('paging filler', { after: foreign })).extensions?.code).toBe('BAD_CURSOR');
  });

  it('never passes FTS5 syntax through: quotes, *, NEAR, -, OR, column filters are text', async () => {
    expect(await mbidsOf('say "hi" near')).toEqual([SEARCH.syntax]);
    expect(await mbidsOf('NEAR minus')).toEqual([SEARCH.syntax]);
    expect(await mbidsOf('-minus * star')).toEqual([SEARCH.syntax]);
    expect(await mbidsOf('"say hi')).toEqual([SEARCH.syntax]);
    for (const q of [
      'grosse OR doomed',
      'name:grosse',
      'NOT grosse',
      'grosse AND',
      '(grosse',
      '^grosse',
      'a" OR "b',
    ]) {
      const answer = await search(q);
      expect(answer.errors, q).toBeUndefined();
    }
    expect(await mbidsOf('grosse OR doomed')).toEqual([]);
  });

  it('refuses a blank query, or one of only symbols, with BAD_USER_INPUT naming the argument', async () => {
    for (const q of ['', '   ', '-', '" "', '* - ^']) {
      const error = await errorOf(q);
      expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'query' });
      expect(error.message).toContain('"query" has no word');
    }
    expect((await errorOf('x'.repeat(201))).extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('pages like every connection: at most 500, and the page size counts in the cost limit', async () => {
    expect((await errorOf('grosse', { first: 501 })).extensions?.code).toBe('PAGE_SIZE_EXCEEDED');
    const heavy = await gql(
      run().app,
      '{ search(query: "grosse", first: 500) { nodes { history(first: 500) { nodes { packet position mbid name } } } } }',
    );
    expect(heavy.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('a word in more than 1,000 entities must match but does not rank: alone, every hit scores 0, newest first', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await search('crowd ', { first: 500, after })).data!.search;
      expect(page.totalCount).toBe(CROWD + 1);
      expect(new Set(page.edges.map((e: { score: number }) => e.score))).toEqual(new Set([0]));
      seen.push(...page.nodes.map((n: { mbid: string }) => n.mbid));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    // Equal scores come newest change first: here the dump's last line first.
    expect(seen).toEqual([SPECIAL, ...Array.from({ length: CROWD }, (_, n) => crowdMbid(CROWD - 1 - n))]);
  });

  it('with a rarer word, a search ranks by it: the common word still has to match', async () => {
    const special = (await search('special')).data!.search.edges;
    for (const q of ['crowd special', 'crowd spe', 'special crowd']) {
      const edges = (await search(q)).data!.search.edges;
      expect(
        edges.map((e: { node: { mbid: string } }) => e.node.mbid),
        q,
      ).toEqual([SPECIAL]);
      expect(edges[0].score, q).toBeGreaterThan(0);
      expect(edges[0].score, q).toBe(special[0].score);
    }
    expect(await mbidsOf('crowd wonder')).toEqual([]);
  });

  it('a hit’s name is the one entity(mbid) gives: name, else title, null when neither is a string', async () => {
    for (const [q, mbid, name] of [
      ['nameless wonder', NAMELESS, 'Odd Title'],
      ['numeric wonder', NUMERIC, null],
    ] as const) {
      const hit = (await search(q)).data!.search.edges[0].node;
      const entity = await gql(run().app, `{ entity(mbid: "${mbid}") { latest { name } } }`);
      expect(hit).toMatchObject({ mbid, latest: { name } });
      expect(entity.data!.entity.latest.name).toBe(name);
    }
  });
});

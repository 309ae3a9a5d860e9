import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIST_SIZE, LINE_COST, operationCost, ROW_COST } from '../../../src/graphql/plugins/cost.js';
import { DEFAULT_QUERY_LIMITS } from '../../../src/graphql/plugins/limits.js';
import { schema } from '../../../src/graphql/schema.js';
import { MAX_REPLICATED_TABLES } from '../../../src/graphql/types/replication.js';

/** Issue 16: each list counted by what it can really return, by rules that follow the schema. */

const cost = (query: string, variables?: Record<string, unknown>) =>
  operationCost(schema, parse(query), variables);

describe('the cost of lists', () => {
  it('a connection counts its first (default 20, at most 500), history and removals included', () => {
    const node = 1 + LINE_COST; // nodes, data
    expect(cost('{ entity(mbid: "x") { history { nodes { data } } } }')).toBe(1 + 20 * (1 + node));
    expect(cost('{ entity(mbid: "x") { history(first: 3) { nodes { data } } } }')).toBe(1 + 3 * (1 + node));
    expect(cost('{ entity(mbid: "x") { history(first: 9000) { totalCount } } }')).toBe(1 + 500 * 2);
    expect(cost('{ removals(first: 7) { nodes { mbid } } }')).toBe(7 * (1 + 2));
    expect(cost('{ packet(number: 1) { replication { removals { nodes { mbid } } } } }')).toBe(
      1 + 1 + 20 * (1 + 2),
    );
  });

  it('a list argument counts its length, literal or variable; an enum list its values', () => {
    const three = ['a', 'b', 'c'];
    expect(cost(`{ entities(mbids: ${JSON.stringify(three)}) { mbid } }`)).toBe(3 * 2);
    expect(cost('query($m: [ID!]!) { resolve(mbids: $m) { mbid } }', { m: Array(500).fill('a') })).toBe(
      500 * 2,
    );
    expect(cost('{ service { completeEntityTypes } }')).toBe(1 + 11);
  });

  it('declared bounds: Packet.dumps 11, ReplicationPacket.tables, MbidResolution.path', () => {
    expect(cost('{ packet(number: 1) { dumps { entity } } }')).toBe(1 + 11 * 2);
    expect(cost('{ packet(number: 1) { replication { tables { table } } } }')).toBe(
      1 + 1 + MAX_REPLICATED_TABLES * 2,
    );
    expect(cost('{ resolve(mbids: ["a"]) { path } }')).toBe(1 + 65);
  });

  it("a stored line costs LINE_COST, a table row's JSON ROW_COST, a quarantined line LINE_COST", () => {
    expect(cost('{ changes(packet: 1, entity: AREA, first: 1) { nodes { data } } }')).toBe(1 + 1 + LINE_COST);
    expect(cost('{ rowChanges(packet: 1, first: 1) { nodes { keys oldData newData } } }')).toBe(
      1 + 1 + 3 * ROW_COST,
    );
    expect(cost('{ quarantine(first: 1) { nodes { raw } } }')).toBe(1 + 1 + LINE_COST);
  });

  it('under a union or an interface, a value pays for its own type only: the dearest fragment, not the sum', () => {
    const change = '... on EntityChange { mbid data }';
    const removal = '... on EntityRemoval { mbid kind mergedInto }';
    const page = (selection: string) =>
      cost(`{ changeFeed(first: 10) { nodes { __typename ${selection} } } }`);
    const base = page('');
    expect(page(change) - base).toBe(10 * (1 + LINE_COST));
    expect(page(removal) - base).toBe(10 * 3);
    expect(page(`${change} ${removal}`)).toBe(page(change));
    // Eleven typed entity fragments of MusicBrainzEntity cost what one of them does.
    const typed = (types: string[]) =>
      cost(
        `{ entity(mbid: "x") { current { mbid ${types.map((t) => `... on ${t} { name disambiguation }`).join(' ')} } } }`,
      );
    const all = ['Area', 'Artist', 'Event', 'Instrument', 'Label', 'Place', 'Recording', 'Release'];
    expect(typed(all)).toBe(typed(['Artist']));
    expect(typed(['Artist', 'Recording'])).toBe(typed(['Artist']));
    expect(typed(['Artist'])).toBeGreaterThan(typed([]));
  });

  it("the typed view of a line costs at most the line (the issue's day of one entity type fits), once more for each alias that repeats a field, plus its links", () => {
    const typed = 'mbid name disambiguation aliases { name sortName locale primary } tags { name count }';
    const day = cost(
      `{ changeFeed(first: 500, entities: [ARTIST]) { nodes { ... on EntityChange { entity { ${typed} } } } } }`,
    );
    expect(day).toBe(500 * (1 + 1 + 1 + LINE_COST));
    expect(day).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
    expect(
      cost(`{ changes(packet: 1, entity: ARTIST, first: 500) { nodes { entity { ${typed} } } } }`),
    ).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
    // Two lines an event (README, Change stream: Size): a page of 350 fits.
    const twoLines = (first: number) =>
      cost(
        `{ changeFeed(first: ${first}) { nodes { ... on EntityChange { data diff { op path value } } } } }`,
      );
    expect(twoLines(350)).toBeLessThanOrEqual(DEFAULT_QUERY_LIMITS.maxCost);
    expect(twoLines(500)).toBeGreaterThan(DEFAULT_QUERY_LIMITS.maxCost);
    // A small selection costs what it costs, below the line's cap.
    const current = (selection: string) => cost(`{ entity(mbid: "x") { current { ${selection} } } }`);
    expect(current('mbid name')).toBe(1 + 1 + 2);
    expect(current(typed)).toBe(1 + 1 + LINE_COST);
    // Ten names for the aliases answer them ten times: each counts, up to a line each.
    const repeated = Array.from({ length: 10 }, (_, i) => `a${i}: aliases { name sortName locale primary }`);
    expect(current(repeated.join(' '))).toBe(1 + 1 + 10 * LINE_COST);
    // Links read other lines: they count beyond the line's cap, by the references a line holds.
    const linked = current(`${typed} ... on Recording { artistCredit { artist { latest { data } } } }`);
    expect(linked).toBeGreaterThan(1 + 1 + LINE_COST + 100 * LINE_COST);
  });

  it('fields added by others are counted by the same rules, without naming them', () => {
    // A schema as parallel work extends it: a change feed connection, a search taking a list,
    // typed-entity lists (aliases, tags) with and without a declared bound, a JSON field.
    const extended = buildSchema(`
      scalar JSON
      enum Kind { A B C }
      type Change { mbid: ID! data: JSON }
      type ChangeConnection { nodes: [Change!]! edges: [ChangeEdge!]! }
      type ChangeEdge { node: Change! }
      type Alias { name: String! }
      type Current { aliases: [Alias!]! kinds: [Kind!]! }
      type Query {
        changeFeed(first: Int, after: String): ChangeConnection!
        search(terms: [String!]!): [Current!]!
        current: Current
      }`);
    const c = (query: string) => operationCost(extended, parse(query));
    expect(c('{ changeFeed(first: 50) { nodes { mbid data } } }')).toBe(50 * (1 + 1 + 1 + ROW_COST));
    expect(c('{ changeFeed { edges { node { mbid } } } }')).toBe(20 * (1 + 1 + 2));
    expect(c('{ search(terms: ["a", "b"]) { kinds } }')).toBe(2 * (1 + 3));
    expect(c('{ current { aliases { name } } }')).toBe(1 + DEFAULT_LIST_SIZE * 2);
  });
});

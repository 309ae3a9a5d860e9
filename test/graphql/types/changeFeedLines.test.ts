import { join } from 'node:path';
import {
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  parse,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectsChangeLines } from '../../../src/graphql/types/changeFeedLines.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { describeAppStores } from '../../support/appStores.js';
import { GrowingFeed } from '../../support/growingFeed.js';
import { gql, syncContextOn } from '../../support/harness.js';
import { recordStatements } from '../../support/statementCount.js';

/** The `changeFeed` field of `query` and its fragments, as a resolver's `info` holds them. */
function changeFeedOf(query: string): [FieldNode[], Record<string, FragmentDefinitionNode>] {
  const document = parse(query);
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  const operation = document.definitions.find(
    (d) => d.kind === Kind.OPERATION_DEFINITION,
  ) as OperationDefinitionNode;
  const field = operation.selectionSet.selections.find(
    (s): s is FieldNode => s.kind === Kind.FIELD && s.name.value === 'changeFeed',
  )!;
  return [[field], fragments];
}

const lines = (query: string) => selectsChangeLines(...changeFeedOf(query));

describe('selectsChangeLines: may the changeFeed selection show a line?', () => {
  it('no for the key fields, removals, cursors, page info and counts', () => {
    expect(
      lines(`{ changeFeed { totalCount pageInfo { endCursor } edges { cursor node { __typename } }
        nodes { __typename ... on EntityChange { mbid type packet position timestamp }
          ... on EntityRemoval { mbid type packet kind mergedInto timestamp } } } }`),
    ).toBe(false);
    expect(lines('{ changeFeed { nodes { ...R } } } fragment R on EntityRemoval { kind mergedInto }')).toBe(
      false,
    );
    // An alias names the answer's key, not the field read.
    expect(lines('{ changeFeed { nodes { ... on EntityChange { data: mbid } } } }')).toBe(false);
  });

  it('yes for the line and whatever is read from it, under nodes, edges and fragments', () => {
    for (const field of [
      'data',
      'd: data',
      'diff { op path }',
      'name',
      'entity { mbid }',
      'previous { packet }',
    ])
      expect(lines(`{ changeFeed { nodes { ... on EntityChange { mbid ${field} } } } }`), field).toBe(true);
    expect(lines('{ changeFeed { edges { node { ... on EntityChange { data } } } } }')).toBe(true);
    expect(lines('{ changeFeed { nodes { ...C } } } fragment C on EntityChange { mbid data }')).toBe(true);
    expect(
      lines('{ changeFeed { nodes { ...E } } } fragment E on FeedEvent { ... on EntityChange { data } }'),
    ).toBe(true);
    // Directives are not evaluated: a line that may be shown counts.
    expect(lines('{ changeFeed { nodes { ... on EntityChange { data @skip(if: true) } } } }')).toBe(true);
  });

  it('answers the same for the same parsed field again (cached per field node)', () => {
    const [fields, fragments] = changeFeedOf('{ changeFeed { nodes { ... on EntityChange { data } } } }');
    expect(selectsChangeLines(fields, fragments)).toBe(true);
    expect(selectsChangeLines(fields, fragments)).toBe(true);
  });
});

const feeds = new Map<SyncStore['kind'], { feed: SampleFeed }>();

/** The bundled feed's first eight packets, synced by either store's writer. */
async function build(writer: SyncStore, dir: string): Promise<void> {
  const growing = new GrowingFeed(join(dir, 'feed'));
  await growing.publishUpTo(growing.manifest.firstPacket + 7);
  const feed = await startSampleFeed({ root: growing.root });
  feeds.set(writer.kind, { feed });
  const ctx = await syncContextOn(writer, {
    feedRoot: feed.feedRoot,
    dataDir: dir,
    replicationPackets: true,
  });
  try {
    expect((await syncOnce(ctx, { from: growing.manifest.firstPacket })).problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
  }
}

const PAGE = (fields: string) => `query($after: String) { changeFeed(first: 500, after: $after) {
  pageInfo { endCursor hasNextPage }
  edges { cursor node { __typename ... on EntityChange { ${fields} } ... on EntityRemoval { mbid kind } } }
} }`;

interface Edge {
  cursor: string;
  node: { __typename: string; mbid: string; packet?: number; position?: number; data?: { id: string } };
}

describeAppStores('changeFeed without its lines: the same page, read without them', build, (kind, run) => {
  let statements: string[] = [];
  beforeAll(() => {
    if (kind === 'sqlite') statements = recordStatements(run().reader!);
  });
  afterAll(async () => {
    await feeds.get(kind)?.feed.close();
  });
  const page = async (fields: string) => {
    statements.length = 0;
    const answer = await gql(run().app, PAGE(fields));
    expect(answer.errors).toBeUndefined();
    return answer.data!.changeFeed as { pageInfo: unknown; edges: Edge[] };
  };
  const readLines = () => statements.some((sql) => sql.includes('group_concat(data'));

  it('answers every event, cursor and page info as the page with its lines does', async () => {
    const withLines = await page('mbid type packet position timestamp data');
    expect(kind !== 'sqlite' || readLines()).toBe(true);
    const keys = await page('mbid type packet position timestamp');
    // SQLite reads the page without its lines (PostgreSQL takes them either way).
    expect(kind === 'sqlite' && readLines()).toBe(false);
    expect(keys.edges.length).toBeGreaterThan(10);
    expect(keys.pageInfo).toEqual(withLines.pageInfo);
    const withoutData = withLines.edges.map(({ cursor, node }) => {
      const { data, ...rest } = node;
      if (data) expect(data.id).toBe(node.mbid);
      return { cursor, node: rest };
    });
    expect(keys.edges).toEqual(withoutData);
  });

  it('changes and JsonDump.changes: the same page without the lines, read without them', async () => {
    const { edges } = await page('mbid type packet position');
    const first = edges.find((e) => e.node.__typename === 'EntityChange')!.node as Edge['node'] & {
      type: string;
    };
    const dump = `packet: ${first.packet}, entity: ${first.type}`;
    const nodes = async (query: string) => {
      statements.length = 0;
      const answer = await gql(run().app, query);
      expect(answer.errors).toBeUndefined();
      return answer.data!;
    };
    const withLines = await nodes(`{ changes(${dump}, first: 500) { nodes { mbid position data } } }`);
    expect(kind !== 'sqlite' || readLines()).toBe(true);
    const keys = await nodes(`{ changes(${dump}, first: 500) { edges { cursor node { mbid position } } } }`);
    expect(kind === 'sqlite' && readLines()).toBe(false);
    const expected = withLines.changes.nodes as { mbid: string; position: number; data: { id: string } }[];
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.every((n) => n.data.id === n.mbid)).toBe(true);
    expect(keys.changes.edges.map((e: { node: unknown }) => e.node)).toEqual(
      expected.map(({ mbid, position }) => ({ mbid, position })),
    );
    const nested = await nodes(
      `{ packet(number: ${first.packet}) { dumps { entity changes(first: 500) { nodes { mbid position } } } } }`,
    );
    expect(kind === 'sqlite' && readLines()).toBe(false);
    const ofType = (nested.packet.dumps as { entity: string; changes: { nodes: unknown[] } }[]).find(
      (d) => d.entity === first.type,
    )!;
    expect(ofType.changes.nodes).toEqual(expected.map(({ mbid, position }) => ({ mbid, position })));
  });

  it('Entity.history: the same versions without the lines, read without them', async () => {
    const { edges } = await page('mbid');
    const counts = new Map<string, number>();
    for (const { node } of edges)
      if (node.__typename === 'EntityChange') counts.set(node.mbid, (counts.get(node.mbid) ?? 0) + 1);
    const mbid = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const history = async (fields: string) => {
      statements.length = 0;
      const answer = await gql(
        run().app,
        `query($m: ID!) { entity(mbid: $m) { history(first: 500) { nodes { ${fields} } } } }`,
        { m: mbid },
      );
      expect(answer.errors).toBeUndefined();
      return answer.data!.entity.history.nodes as {
        packet: number;
        position: number;
        data?: { id: string };
      }[];
    };
    const withLines = await history('packet position data');
    expect(kind !== 'sqlite' || readLines()).toBe(true);
    const keys = await history('packet position');
    expect(kind === 'sqlite' && readLines()).toBe(false);
    expect(withLines.every((n) => n.data!.id === mbid)).toBe(true);
    expect(keys).toEqual(withLines.map(({ packet, position }) => ({ packet, position })));
  });

  it('still reads the lines when the page shows them through a fragment', async () => {
    statements.length = 0;
    const answer = await gql(
      run().app,
      '{ changeFeed(first: 5) { nodes { ...C } } } fragment C on EntityChange { mbid data }',
    );
    expect(answer.errors).toBeUndefined();
    const nodes = answer.data!.changeFeed.nodes as { mbid?: string; data?: { id: string } }[];
    for (const node of nodes.filter((n) => n.mbid)) expect(node.data!.id).toBe(node.mbid);
    expect(kind !== 'sqlite' || readLines()).toBe(true);
  });
});

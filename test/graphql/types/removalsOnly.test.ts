import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/db/client.js';
import { gql, tempDir, testApp } from '../../support/harness.js';

type App = ReturnType<typeof testApp>;

describe('replication packets not stored, and MBIDs known only from removals', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let app: App;
  const ONLY_REMOVED = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
  /** More removals in one packet than the old unpaged `removals` returned (10,000). */
  const REMOVALS_OF_500 = 10_001;

  beforeAll(async () => {
    data = await tempDir('lf-gql-');
    const store = openStore(`${data.dir}/livefeed.db`);
    const insert = store.sqlite.prepare(
      `INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES (?, 'artist', ?, 'MERGED', NULL)`,
    );
    store.sqlite.transaction(() => {
      for (let i = 0; i < REMOVALS_OF_500; i++) {
        insert.run(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, 500);
      }
      insert.run(ONLY_REMOVED, 501);
      const at = '2026-05-12T00:00:00.000000Z';
      for (const [packet, status, error] of [
        [500, 'SYNCED', null],
        [501, 'SYNCED', null],
        [502, 'MISSING', 'replication-502-v2.tar.bz2 is not on the feed'],
        [503, 'FAILED', 'replication packet 503: broken'],
      ] as const) {
        store.sqlite.prepare('INSERT INTO packets (number, created_at) VALUES (?, ?)').run(packet, at);
        store.sqlite
          .prepare(
            `INSERT INTO replication_packets (packet, status, format, schema_sequence, timestamp, error, updated_at)
             VALUES (?, ?, ?, 31, ?, ?, ?)`,
          )
          .run(packet, status, status === 'SYNCED' ? 'V2' : null, status === 'SYNCED' ? at : null, error, at);
      }
      store.sqlite.prepare('INSERT INTO packets (number, created_at) VALUES (504, ?)').run(at);
    })();
    store.close();
    app = testApp(`${data.dir}/livefeed.db`, data.dir);
  });
  afterAll(async () => {
    app?.store.close();
    await data?.cleanup();
  });

  it('entity(mbid) answers an MBID known only from removals: removed set, latest null, no redirect', async () => {
    const answer = await gql(
      app,
      `query($m: ID!) { entity(mbid: $m) { mbid type latest { packet } history { totalCount nodes { packet } } redirect { mbid }
        removed { kind packet } } removal(mbid: $m) { mbid entity packet kind mergedInto } }`,
      { m: ONLY_REMOVED },
    );
    expect(answer).toEqual({
      data: {
        entity: {
          mbid: ONLY_REMOVED,
          type: 'ARTIST',
          latest: null,
          history: { totalCount: 0, nodes: [] },
          redirect: null,
          removed: { kind: 'MERGED', packet: 501 },
        },
        removal: { mbid: ONLY_REMOVED, entity: 'ARTIST', packet: 501, kind: 'MERGED', mergedInto: null },
      },
    });
    const unknown = await gql(app, '{ entity(mbid: "00000000-0000-4000-8000-0000000fffff") { mbid } }');
    expect(unknown).toEqual({ data: { entity: null } });
  });

  it('removals pages through 10,002 removals without arguments: cursors, bounds, BAD_CURSOR', async () => {
    const page = (args: string) =>
      gql(
        app,
        `{ removals${args} { totalCount pageInfo { hasNextPage hasPreviousPage endCursor } nodes { mbid packet kind } } }`,
      );
    const first = await page('');
    expect(first.errors).toBeUndefined();
    const conn = first.data!.removals;
    expect(conn.totalCount).toBe(REMOVALS_OF_500 + 1);
    expect(conn.nodes).toHaveLength(20);
    expect(conn.nodes[0]).toEqual({
      mbid: '00000000-0000-4000-8000-000000000000',
      packet: 500,
      kind: 'MERGED',
    });
    expect(conn.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    // Walk every page of 500: each MBID once, in (packet, MBID) order, the last page ends.
    const seen: string[] = [];
    let after = '';
    for (;;) {
      const next = await page(`(first: 500, after: "${after}")`);
      expect(next.errors).toBeUndefined();
      const c = next.data!.removals;
      seen.push(...c.nodes.map((n: { mbid: string }) => n.mbid));
      if (!c.pageInfo.hasNextPage) break;
      after = c.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(REMOVALS_OF_500 + 1);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.at(-1)).toBe(ONLY_REMOVED);
    expect([...seen.slice(0, -1)].sort()).toEqual(seen.slice(0, -1));
    // Filters and cursors combine: after the first page of packet 500, from packet 501 only.
    const narrow = await gql(app, '{ removals(fromPacket: 501) { nodes { mbid kind } } }');
    expect(narrow.data!.removals.nodes).toEqual([{ mbid: ONLY_REMOVED, kind: 'MERGED' }]);
    const afterFirst = await page(`(first: 2, after: "${conn.pageInfo.endCursor}")`);
    expect(afterFirst.data!.removals.nodes.map((n: { mbid: string }) => n.mbid)).toEqual(seen.slice(20, 22));
    expect(afterFirst.data!.removals.pageInfo.hasPreviousPage).toBe(true);
    // A cursor of another connection (history) is refused.
    const foreign = Buffer.from('history/00000000-0000-4000-8000-000000000000:5').toString('base64url');
    expect((await page(`(after: "${foreign}")`)).errors?.[0]?.extensions?.code).toBe('BAD_CURSOR');
    const ofPacket = await gql(
      app,
      '{ packet(number: 501) { replication { removals { nodes { mbid } } } } }',
    );
    expect(ofPacket.data!.packet.replication.removals.nodes).toEqual([{ mbid: ONLY_REMOVED }]);
  });

  it("a packet's removals cursor is refused by another packet's and by removals of other filters", async () => {
    const OF_PACKET = `query($n: Int!, $first: Int, $after: String) { packet(number: $n) { replication {
      removals(first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { mbid } } } } }`;
    const ofPacket = async (n: number, first: number, after?: string) => {
      const answer = await gql(app, OF_PACKET, { n, first, after });
      return { errors: answer.errors, page: answer.data?.packet?.replication?.removals };
    };
    const code = (answer: { errors?: readonly { extensions?: Record<string, unknown> }[] }) =>
      answer.errors?.[0]?.extensions?.code;
    const of500 = (await ofPacket(500, 2)).page.pageInfo.endCursor as string;
    const of501 = (await ofPacket(501, 1)).page.pageInfo.endCursor as string;
    const refused = await ofPacket(501, 5, of500);
    expect(code(refused)).toBe('BAD_CURSOR');
    expect(refused.errors?.[0]?.message).toContain('is not a cursor of this connection');
    expect(code(await ofPacket(500, 5, of501))).toBe('BAD_CURSOR');
    for (const args of [
      '',
      'entity: LABEL',
      'fromPacket: 500',
      'fromPacket: 500, toPacket: 500, entity: ARTIST',
    ]) {
      const answer = await gql(app, `{ removals(${args}${args && ', '}after: "${of500}") { totalCount } }`);
      expect(code(answer), args).toBe('BAD_CURSOR');
    }
    // The same rows as the packet's own list, under the same cursor kind (as changes and JsonDump.changes).
    const sameRange = await gql(
      app,
      `{ removals(fromPacket: 500, toPacket: 500, first: 1, after: "${of500}") { nodes { mbid } } }`,
    );
    expect(sameRange.data!.removals.nodes).toEqual([{ mbid: '00000000-0000-4000-8000-000000000002' }]);
    // On its own connection the cursor goes on: pages of 2 after the first are the next rows, each once.
    const whole = (await ofPacket(500, 8)).page.nodes;
    const walked = [...(await ofPacket(500, 2)).page.nodes];
    let after = of500;
    while (walked.length < whole.length) {
      const { errors, page } = await ofPacket(500, 2, after);
      expect(errors).toBeUndefined();
      expect(page.pageInfo.hasNextPage).toBe(true);
      walked.push(...page.nodes);
      after = page.pageInfo.endCursor;
    }
    expect(walked).toEqual(whole);
    // Past the last row: no row, and the cursor it was read after (graphql/connection.ts pageInfo).
    expect((await ofPacket(501, 5, of501)).page).toEqual({
      pageInfo: { hasNextPage: false, endCursor: of501 },
      nodes: [],
    });
  });

  it('replicationStatus says why there is no Packet.replication', async () => {
    const answer = await gql(
      app,
      '{ packets { nodes { number replicationStatus replicationError replication { format } } } }',
    );
    expect(answer.data!.packets.nodes).toEqual([
      { number: 504, replicationStatus: 'NOT_FETCHED', replicationError: null, replication: null },
      {
        number: 503,
        replicationStatus: 'FAILED',
        replicationError: 'replication packet 503: broken',
        replication: null,
      },
      {
        number: 502,
        replicationStatus: 'MISSING',
        replicationError: 'replication-502-v2.tar.bz2 is not on the feed',
        replication: null,
      },
      { number: 501, replicationStatus: 'SYNCED', replicationError: null, replication: { format: 'V2' } },
      { number: 500, replicationStatus: 'SYNCED', replicationError: null, replication: { format: 'V2' } },
    ]);
    const missing = await gql(app, '{ rowChanges(packet: 502) { totalCount } }');
    expect(missing.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 'MISSING' });
    expect(missing.errors?.[0]?.message).toContain('is not stored: its status is MISSING');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/db/client.js';
import { BUNDLED_FEED_ROOT } from '../../../src/samplefeed/server.js';
import { type GqlResult, gql, tempDir, testApp } from '../../support/harness.js';
import { readBundledManifest } from '../../support/manifest.js';
import { pgText } from '../../support/replicationArchives.js';
import { type SyncedFeed, syncFeedFolder, writeDeploymentFeed } from '../../support/replicationFeeds.js';
import { allRows } from '../../support/rowChangesGql.js';

const manifest = readBundledManifest();
const MERGED = 'bbb5fb86-29f4-4ffd-94d6-9976ee6621d6';
const MERGE_TARGET = 'b83f6a51-5dc5-40ce-95ce-8bf1ec7d0778';
const DELETED = '0cb5e728-cf4a-4ecd-9a2f-c2775dca1392';
const ED_SHEERAN = 'b8a7c51f-362c-4dcb-a259-bc6e0095f0a6';

type App = ReturnType<typeof testApp>;
// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are walked field by field
type Node = Record<string, any>;

const asText = (data: Record<string, unknown> | null) =>
  data && Object.fromEntries(Object.entries(data).map(([column, value]) => [column, pgText(value)]));

describe('replication packets over GraphQL (yoga.fetch), both deployments', () => {
  let production: SyncedFeed;
  let testDeployment: SyncedFeed;
  let v1Feed: Awaited<ReturnType<typeof tempDir>>;
  let v2: App;
  let v1: App;

  beforeAll(async () => {
    production = await syncFeedFolder(BUNDLED_FEED_ROOT, { deployment: 'production' });
    v1Feed = await tempDir('lf-v1-feed-');
    await writeDeploymentFeed(v1Feed.dir, manifest, { format: 'v1', deployment: 'test' });
    testDeployment = await syncFeedFolder(v1Feed.dir, { deployment: 'test' });
    v2 = testApp(production.dbPath, production.dataDir);
    v1 = testApp(testDeployment.dbPath, testDeployment.dataDir, { deployment: 'test' });
  }, 60_000);
  afterAll(async () => {
    v2?.store.close();
    v1?.store.close();
    await production?.cleanup();
    await testDeployment?.cleanup();
    await v1Feed?.cleanup();
  });

  it('Packet.replication describes every stored replication packet', async () => {
    // Pages of 12: `tables` counts up to 400 tables a packet in the cost limit.
    const nodes: Node[] = [];
    for (let after: string | null = null; ; ) {
      const { data, errors }: GqlResult = await gql(
        v2,
        `query($after: String) { packets(first: 12, after: $after) { pageInfo { hasNextPage endCursor } nodes {
            number replicationStatus replicationError replication {
            format replicationSequence schemaSequence timestamp dbmirrorVersion rowCount
            tables { table inserts updates deletes }
            removals { nodes { mbid entity packet kind mergedInto timestamp } }
            file { name size sha256 signature fingerprint url } } } } }`,
        { after },
      );
      expect(errors).toBeUndefined();
      nodes.push(...data!.packets.nodes);
      if (!data!.packets.pageInfo.hasNextPage) break;
      after = data!.packets.pageInfo.endCursor;
    }
    const packets = [...nodes].reverse();
    expect(packets.map((p: Node) => p.number)).toEqual(manifest.packets.map((p) => p.number));
    for (const [i, packet] of packets.entries()) {
      const expected = manifest.packets[i]!;
      const replication = expected.replication!;
      const timestamp = expected.timestamp.replace(' ', 'T').replace(/\+00$/, 'Z');
      expect(packet).toEqual({
        number: expected.number,
        replicationStatus: 'SYNCED',
        replicationError: null,
        replication: {
          format: 'V2',
          replicationSequence: expected.number,
          schemaSequence: manifest.schemaSequence,
          timestamp,
          dbmirrorVersion: 2,
          rowCount: replication.rowCount,
          tables: replication.tables,
          removals: {
            nodes: replication.removals.map((r) => ({
              ...r,
              entity: r.entity.toUpperCase(),
              packet: expected.number,
              timestamp,
            })),
          },
          file: {
            name: replication.file,
            size: replication.bytes,
            sha256: replication.sha256,
            signature: 'VERIFIED',
            fingerprint: manifest.signingKeyFingerprint,
            url: `http://livefeed.test/files/${replication.file}`,
          },
        },
      });
    }
    const test = await gql(
      v1,
      '{ packet(number: 186119) { replication { format dbmirrorVersion file { name } } } }',
    );
    expect(test.data!.packet.replication).toEqual({
      format: 'V1',
      dbmirrorVersion: null,
      file: { name: 'replication-186119.tar.bz2' },
    });
  });

  it('a v1 and a v2 packet of the same changes give the same row changes', async () => {
    for (const packet of manifest.packets) {
      const v2Rows = await allRows(v2, packet.number);
      const v1Rows = await allRows(v1, packet.number);
      const shape = (row: Node) => ({
        packet: row.packet,
        seqid: row.seqid,
        xid: row.xid,
        table: row.table,
        op: row.op,
      });
      expect(v1Rows.map(shape), `packet ${packet.number}`).toEqual(v2Rows.map(shape));
      for (const [i, row] of v1Rows.entries()) {
        const twin = v2Rows[i]!;
        // v1 values are text; its inserts name no key, updates carry no old row, deletes only the key columns.
        expect(row.newData).toEqual(asText(twin.newData));
        expect(row.keys).toEqual(row.op === 'INSERT' ? null : asText(twin.keys));
        expect(row.oldData).toEqual(row.op === 'DELETE' ? asText(twin.keys) : null);
        expect(row.timestamp).toBeNull();
      }
    }
  });

  it('removals: a deleted and a merged MBID, the same in both deployments', async () => {
    const expected = [
      { mbid: MERGED, entity: 'RECORDING', packet: 186118, kind: 'MERGED', mergedInto: MERGE_TARGET },
      { mbid: DELETED, entity: 'LABEL', packet: 186122, kind: 'DELETED', mergedInto: null },
    ];
    for (const app of [v2, v1]) {
      const all = await gql(app, '{ removals { totalCount nodes { mbid entity packet kind mergedInto } } }');
      expect(all.errors).toBeUndefined();
      expect(all.data!.removals).toEqual({ totalCount: 2, nodes: expected });
      const ranged = await gql(
        app,
        '{ a: removals(fromPacket: 186100, toPacket: 186118) { nodes { mbid } } b: removals(fromPacket: 186119) { nodes { mbid } } c: removals(entity: LABEL) { nodes { mbid } } d: removals(toPacket: 186117) { nodes { mbid } } }',
      );
      expect(ranged.data).toEqual({
        a: { nodes: [{ mbid: MERGED }] },
        b: { nodes: [{ mbid: DELETED }] },
        c: { nodes: [{ mbid: DELETED }] },
        d: { nodes: [] },
      });
    }
  });

  it('entity(mbid) { removed } tells an app the MBID is gone', async () => {
    const query = `query($m: ID!) { entity(mbid: $m) { mbid type latest { packet } removed { mbid entity packet kind mergedInto } }
      removal(mbid: $m) { kind } }`;
    const merged = await gql(v2, query, { m: MERGED.toUpperCase() });
    expect(merged.errors).toBeUndefined();
    expect(merged.data).toEqual({
      entity: {
        mbid: MERGED,
        type: 'RECORDING',
        latest: { packet: 186106 },
        removed: {
          mbid: MERGED,
          entity: 'RECORDING',
          packet: 186118,
          kind: 'MERGED',
          mergedInto: MERGE_TARGET,
        },
      },
      removal: { kind: 'MERGED' },
    });
    const deleted = await gql(v1, query, { m: DELETED });
    expect(deleted.data!.entity.removed).toEqual({
      mbid: DELETED,
      entity: 'LABEL',
      packet: 186122,
      kind: 'DELETED',
      mergedInto: null,
    });
    const alive = await gql(v2, query, { m: ED_SHEERAN });
    expect(alive.data).toMatchObject({ entity: { removed: null }, removal: null });
  });

  it('entity(mbid) { redirect } leads from a merged MBID to the entity it was merged into', async () => {
    const answer = await gql(
      v2,
      'query($m: ID!) { entity(mbid: $m) { mbid redirect { mbid type redirect { mbid } removed { kind } } } }',
      { m: MERGED },
    );
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.entity).toEqual({
      mbid: MERGED,
      redirect: { mbid: MERGE_TARGET, type: 'RECORDING', redirect: null, removed: null },
    });
    const alive = await gql(v2, 'query($m: ID!) { entity(mbid: $m) { redirect { mbid } } }', {
      m: ED_SHEERAN,
    });
    expect(alive.data!.entity).toEqual({ redirect: null });
  });

  it.each([
    ['{ rowChanges(packet: 0) { totalCount } }', 'INVALID_PACKET'],
    ['{ rowChanges(packet: 186100, table: "artist") { totalCount } }', 'INVALID_TABLE'],
    [`{ rowChanges(packet: 186100, table: "musicbrainz.artist'; --") { totalCount } }`, 'INVALID_TABLE'],
    ['{ rowChanges(packet: 186099) { totalCount } }', 'NOT_FOUND'],
    ['{ rowChanges(packet: 186100, first: 501) { totalCount } }', 'PAGE_SIZE_EXCEEDED'],
    ['{ rowChanges(packet: 186100, after: "cGFja2V0OjE4NjEwMA") { totalCount } }', 'BAD_CURSOR'],
    ['{ removals(fromPacket: 186110, toPacket: 186100) { totalCount } }', 'BAD_USER_INPUT'],
    ['{ removals(fromPacket: -1) { totalCount } }', 'INVALID_PACKET'],
    ['{ removals(first: 501) { totalCount } }', 'PAGE_SIZE_EXCEEDED'],
    ['{ removals(after: "cGFja2V0OjE4NjEwMA") { totalCount } }', 'BAD_CURSOR'],
    ['{ removal(mbid: "nope") { mbid } }', 'INVALID_MBID'],
  ])('%s fails with code %s', async (query, code) => {
    const { data, errors } = await gql(v2, query);
    expect(errors?.[0]?.extensions?.code).toBe(code);
    expect(errors?.[0]?.message.length).toBeGreaterThan(10);
    expect(data === null || data === undefined || Object.values(data).every((v) => v === null)).toBe(true);
  });
});

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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it.each([
    [
      '{ removals(fromPacket: -5) { totalCount } }',
      'fromPacket',
      '"fromPacket" must be a replication sequence',
    ],
    ['{ removals(toPacket: 0) { totalCount } }', 'toPacket', '"toPacket" must be a replication sequence'],
    ['{ packet(number: 0) { number } }', 'number', '"number" must be a replication sequence'],
    [
      '{ rowChanges(packet: 186100, first: -1) { totalCount } }',
      'first',
      '"first" must not be negative, got -1',
    ],
    ['{ removals(first: 501) { totalCount } }', 'first', '"first" is 501'],
  ])('%s names its argument (%s)', async (query, argument, message) => {
    const { errors } = await gql(v2, query);
    expect((errors?.[0]?.extensions as Record<string, unknown> | undefined)?.argument).toBe(argument);
    expect(errors?.[0]?.message).toContain(message);
  });
});

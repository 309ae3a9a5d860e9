import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { syncOnce } from '../../src/sync/worker.js';
import { describeAppStores } from '../support/appStores.js';
import { type GqlResult, gql, syncContext, syncContextOn, tempDir, testApp } from '../support/harness.js';
import { type ManifestPacket, readBundledManifest } from '../support/manifest.js';

const manifest = readBundledManifest();
const withDumps = (p: ManifestPacket) => Object.keys(p.jsonDumps).length > 0;

describe('GraphQL over a synced bundled feed (yoga.fetch)', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let app: ReturnType<typeof testApp>;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir });
    await syncOnce(ctx);
    ctx.store.close();
    app = testApp(ctx.store.path, data.dir);
  });
  afterAll(async () => {
    app.store.close();
    await feed.close();
    await data.cleanup();
  });

  it('changes: pages in file order with opaque cursors, totalCount and pageInfo', async () => {
    const packet = manifest.packets.find((p) => (p.jsonDumps.label?.mbids.length ?? 0) >= 2)!;
    const expected = packet.jsonDumps.label!;
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const { data: d, errors }: GqlResult = await gql(
        app,
        `query($p: Int!, $after: String) { changes(packet: $p, entity: LABEL, first: 1, after: $after) {
          totalCount pageInfo { hasNextPage endCursor } edges { cursor node { mbid type packet position name data } } nodes { mbid } } }`,
        { p: packet.number, after },
      );
      expect(errors).toBeUndefined();
      const conn: NonNullable<GqlResult['data']> = d!.changes;
      expect(conn.totalCount).toBe(expected.mbids.length);
      expect(conn.nodes.map((n: { mbid: string }) => n.mbid)).toEqual(
        conn.edges.map((e: { node: { mbid: string } }) => e.node.mbid),
      );
      for (const edge of conn.edges) {
        expect(edge.node).toMatchObject({ type: 'LABEL', packet: packet.number });
        expect(edge.node.data.id).toBe(edge.node.mbid);
        expect(edge.node.name).toBe(expected.names[seen.length]);
        expect(edge.cursor).not.toMatch(/^\d+$/);
        seen.push(edge.node.mbid);
      }
      expect(conn.pageInfo.endCursor).toBe(conn.edges.at(-1)?.cursor ?? null);
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected.mbids);
  });

  it('JsonDump.changes pages the same way', async () => {
    const packet = manifest.packets.find((p) => p.jsonDumps.recording)!;
    const { data: d } = await gql(
      app,
      `query($n: Int!) { packet(number: $n) { dumps { entity changes(first: 500) { nodes { mbid } } } } }`,
      { n: packet.number },
    );
    const recording = d!.packet.dumps.find((x: { entity: string }) => x.entity === 'RECORDING');
    expect(recording.changes.nodes.map((n: { mbid: string }) => n.mbid)).toEqual(
      packet.jsonDumps.recording!.mbids,
    );
  });

  it('entity: history oldest first, latest is the newest change', async () => {
    const occurrences = new Map<string, number[]>();
    for (const p of manifest.packets.filter(withDumps)) {
      for (const dump of Object.values(p.jsonDumps))
        for (const m of dump!.mbids) occurrences.set(m, [...(occurrences.get(m) ?? []), p.number]);
    }
    const [mbid, packets] = [...occurrences].find(([, ps]) => ps.length >= 2)!;
    const { data: d, errors } = await gql(
      app,
      `query($m: ID!) { entity(mbid: $m) { mbid type latest { packet mbid } history { nodes { packet position } } } }`,
      { m: mbid },
    );
    expect(errors).toBeUndefined();
    expect(d!.entity.mbid).toBe(mbid);
    expect(d!.entity.history.nodes.map((h: { packet: number }) => h.packet)).toEqual(packets);
    expect(d!.entity.latest.packet).toBe(packets.at(-1));
    const missing = await gql(app, `{ entity(mbid: "00000000-0000-4000-8000-000000000000") { mbid } }`);
    expect(missing.data!.entity).toBeNull();
  });

  it.each([
    ['{ changes(packet: 186100, entity: AREA, first: 501) { totalCount } }', 'PAGE_SIZE_EXCEEDED'],
    ['{ changes(packet: 186100, entity: AREA, first: -1) { totalCount } }', 'BAD_USER_INPUT'],
    ['{ changes(packet: 186100, entity: AREA, after: "bm9wZQ") { totalCount } }', 'BAD_CURSOR'],
    ['{ changes(packet: -3, entity: AREA) { totalCount } }', 'INVALID_PACKET'],
    ['{ entity(mbid: "nope") { mbid } }', 'INVALID_MBID'],
  ])('%s fails with code %s', async (query, code) => {
    const { data: d, errors } = await gql(app, query);
    expect(errors?.[0]?.extensions?.code).toBe(code);
    expect(errors?.[0]?.message.length).toBeGreaterThan(10);
    expect(d === null || d === undefined || Object.values(d).every((v) => v === null)).toBe(true);
  });

  it('a cursor of one connection is refused by another', async () => {
    const { data: d } = await gql(app, '{ packets(first: 1) { pageInfo { endCursor } } }');
    const cursor = d!.packets.pageInfo.endCursor;
    const { errors } = await gql(
      app,
      `{ changes(packet: 186100, entity: AREA, after: "${cursor}") { totalCount } }`,
    );
    expect(errors?.[0]?.extensions?.code).toBe('BAD_CURSOR');
  });
});

/** The bundled feed synced by each store's writer. */
async function syncBundled(writer: SyncStore, dir: string): Promise<void> {
  const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  const ctx = await syncContextOn(writer, { feedRoot: feed.feedRoot, dataDir: dir });
  try {
    expect((await syncOnce(ctx)).problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
    await feed.close();
  }
}

describeAppStores('GraphQL packets over a synced bundled feed', syncBundled, (_kind, run) => {
  it('latestPacket: the newest complete packet with all eleven dumps', async () => {
    const last = manifest.packets.at(-1)!;
    const { data: d, errors } = await gql(
      run().app,
      `{
      latestPacket { number timestamp schemaSequence syncedAt
        dumps { entity status changeCount file { name url signatureUrl size sha256 signature fingerprint fetchedAt } } } }`,
    );
    expect(errors).toBeUndefined();
    const packet = d!.latestPacket;
    expect(packet.number).toBe(manifest.lastPacket);
    expect(packet.timestamp).toBe(last.timestamp.replace(' ', 'T').replace('+00', 'Z'));
    expect(packet.schemaSequence).toBe(manifest.schemaSequence);
    expect(Date.parse(packet.syncedAt)).toBeGreaterThan(0);
    expect(packet.dumps.map((x: { entity: string }) => x.entity)).toEqual([
      'AREA',
      'ARTIST',
      'EVENT',
      'INSTRUMENT',
      'LABEL',
      'PLACE',
      'RECORDING',
      'RELEASE',
      'RELEASE_GROUP',
      'SERIES',
      'WORK',
    ]);
    for (const dump of packet.dumps) {
      const entity = dump.entity.toLowerCase().replace('_', '-') as keyof ManifestPacket['jsonDumps'];
      const expected = last.jsonDumps[entity];
      if (!expected) {
        expect(dump).toMatchObject({ status: 'NO_CHANGES', changeCount: 0, file: null });
        continue;
      }
      expect(dump).toMatchObject({ status: 'SYNCED', changeCount: expected.mbids.length });
      expect(dump.file).toMatchObject({
        name: expected.file,
        url: `http://livefeed.test/files/${expected.file}`,
        signatureUrl: `http://livefeed.test/files/${expected.signature}`,
        size: expected.bytes,
        sha256: expected.sha256,
        signature: 'UNVERIFIED',
        fingerprint: null,
      });
      expect(JSON.stringify(dump.file)).not.toContain('token');
    }
  });

  it('packets: newest first, paged', async () => {
    const numbers: number[] = [];
    let after: string | null = null;
    do {
      const { data: d }: GqlResult = await gql(
        run().app,
        `query($a: String) { packets(first: 10, after: $a) { totalCount pageInfo { hasNextPage endCursor } nodes { number } } }`,
        { a: after },
      );
      expect(d!.packets.totalCount).toBe(24);
      numbers.push(...d!.packets.nodes.map((n: { number: number }) => n.number));
      after = d!.packets.pageInfo.hasNextPage ? d!.packets.pageInfo.endCursor : null;
    } while (after);
    expect(numbers).toEqual(manifest.packets.map((p) => p.number).reverse());
  });

  it('service says whether this is the demo', async () => {
    const { data: d } = await gql(run().app, '{ service { demo deployment version } }');
    expect(d!.service).toEqual({ demo: false, deployment: 'production', version: 'test' });
  });

  it.each([
    ['{ packet(number: 0) { number } }', 'INVALID_PACKET'],
    ['{ packets(after: "x") { totalCount } }', 'BAD_CURSOR'],
    ['{ packets(first: 501) { totalCount } }', 'PAGE_SIZE_EXCEEDED'],
  ])('%s fails with code %s', async (query, code) => {
    const { data: d, errors } = await gql(run().app, query);
    expect(errors?.[0]?.extensions?.code).toBe(code);
    expect(errors?.[0]?.message.length).toBeGreaterThan(10);
    expect(d === null || d === undefined || Object.values(d).every((v) => v === null)).toBe(true);
  });
});

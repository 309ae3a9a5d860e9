import { expect, it } from 'vitest';
import { describeAppStores } from '../../support/appStores.js';
import { syncBundledFeed } from '../../support/feedStores.js';
import { gql } from '../../support/harness.js';
import { type ManifestRowChange, readBundledManifest } from '../../support/manifest.js';
import { allRows, type Node, v2Answer } from '../../support/rowChangesGql.js';

// rowChanges over either store: the bundled feed's v2 replication packets stored by each store's
// sync writer (row images jsonb on PostgreSQL, JSON text on SQLite) answer the same JSON.

const manifest = readBundledManifest();

describeAppStores('rowChanges over either store', syncBundledFeed, (kind, run) => {
  const app = () => run().app;

  it('production: every row of every packet, with its operation and data as the builder wrote them', async () => {
    for (const packet of manifest.packets) {
      const rows = await allRows(app(), packet.number);
      expect(rows, `packet ${packet.number}`).toEqual(
        packet.replication!.rows.map((row) => v2Answer(packet.number, row)),
      );
    }
    // oldData/newData are objects, not strings; tabs, newlines and backslashes survive.
    const [annotation] = (await allRows(app(), 186119, 500, ', table: "musicbrainz.annotation"')) as Node[];
    expect(annotation!.newData.text).toBe(
      'Official site:\thttps://www.edsheeran.com/\nSee also "Ed Sheeran (disambiguation)" \\ C:\\dir\r\nend',
    );
    // xids beyond 2^31 come back exact.
    expect(
      Math.max(...manifest.packets.flatMap((p) => p.replication!.rows.map((r) => r.xid))),
    ).toBeGreaterThan(2 ** 31);
  });

  it('pages one row at a time in apply order, with opaque cursors', async () => {
    const packet = manifest.packets.find((p) => p.number === 186119)!;
    const rows = await allRows(app(), packet.number, 1);
    expect(rows).toEqual(packet.replication!.rows.map((row) => v2Answer(packet.number, row)));
  });

  it('filters by table and operation; the quoted table name is accepted', async () => {
    const packet = manifest.packets.find((p) => p.number === 186118)!;
    const expected = (keep: (row: ManifestRowChange) => boolean) =>
      packet.replication!.rows.filter(keep).map((row) => v2Answer(packet.number, row));
    expect(await allRows(app(), 186118, 1, ', table: "musicbrainz.recording"')).toEqual(
      expected((row) => row.table === 'musicbrainz.recording'),
    );
    expect(
      await allRows(app(), 186118, 500, ', table: "\\"musicbrainz\\".\\"recording\\"", op: DELETE'),
    ).toEqual(expected((row) => row.table === 'musicbrainz.recording' && row.op === 'd'));
    expect(await allRows(app(), 186118, 500, ', op: INSERT')).toEqual(expected((row) => row.op === 'i'));
    expect(await allRows(app(), 186118, 500, ', table: "musicbrainz.nothing_here"')).toEqual([]);
    // Packet (packet.ts) reads ctx.store until another helper's part of step 4 lands: SQLite only here.
    if (kind === 'postgres') return;
    const nested = await gql(
      app(),
      '{ packet(number: 186118) { replication { rowChanges(op: UPDATE) { totalCount nodes { seqid op } } } } }',
    );
    expect(nested.data!.packet.replication.rowChanges).toEqual({
      totalCount: 1,
      nodes: expected((row) => row.op === 'u').map((row) => ({ seqid: row.seqid, op: row.op })),
    });
  });

  it('a cursor holds only with its own packet, table and op; there the next page goes on', async () => {
    const packet = manifest.packets.find((p) => p.number === 186118)!;
    const recording = packet.replication!.rows.filter((row) => row.table === 'musicbrainz.recording');
    expect(recording).toHaveLength(2);
    const PAGE = `query($p: Int!, $t: String, $op: RowOperation, $after: String) {
      rowChanges(packet: $p, table: $t, op: $op, first: 1, after: $after) {
        pageInfo { hasNextPage endCursor } nodes { seqid op } } }`;
    const ask = (variables: Record<string, unknown>) => gql(app(), PAGE, variables);
    const first = await ask({ p: 186118, t: 'musicbrainz.recording' });
    const after = first.data!.rowChanges.pageInfo.endCursor as string;
    for (const other of [
      { p: 186118, t: 'musicbrainz.recording_gid_redirect' },
      { p: 186118 },
      { p: 186118, t: 'musicbrainz.recording', op: 'DELETE' },
      { p: 186119, t: 'musicbrainz.recording' },
    ]) {
      const answer = await ask({ ...other, after });
      expect(answer.errors?.[0]?.extensions?.code, JSON.stringify(other)).toBe('BAD_CURSOR');
      expect(answer.errors?.[0]?.message).toContain('is not a cursor of this connection');
    }
    // The quoted table name is the same filter: the cursor goes on to the second and last row.
    const next = await ask({ p: 186118, t: '"musicbrainz"."recording"', after });
    expect(next.errors).toBeUndefined();
    expect([...first.data!.rowChanges.nodes, ...next.data!.rowChanges.nodes]).toEqual(
      recording.map((row) => ({ seqid: row.seqid, op: v2Answer(186118, row).op })),
    );
    expect(next.data!.rowChanges.pageInfo.hasNextPage).toBe(false);
  });

  it('a packet whose replication packet is not stored is NOT_FOUND; a bad table INVALID_TABLE', async () => {
    const missing = await gql(app(), '{ rowChanges(packet: 186099) { totalCount } }');
    expect(missing.errors?.[0]?.extensions).toMatchObject({
      code: 'NOT_FOUND',
      packet: 186099,
      status: null,
    });
    const table = await gql(
      app(),
      '{ rowChanges(packet: 186118, table: "Musicbrainz.Recording") { totalCount } }',
    );
    expect(table.errors?.[0]?.extensions?.code).toBe('INVALID_TABLE');
  });
});

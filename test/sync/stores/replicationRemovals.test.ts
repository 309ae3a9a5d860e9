import { join } from 'node:path';
import { expect, it } from 'vitest';
import { writeJsonDump } from '../../support/archives.js';
import { tempDir } from '../../support/harness.js';
import {
  ED_SHEERAN_ROW as ED,
  type FixtureRow,
  gidRedirectRow,
  MOHAMED_MOUNIR_ROW as MOUNIR,
} from '../../support/replicationArchives.js';
import { HOUR, MORNING, NOW, replicationFixture, WISH } from '../../support/replicationStores.js';
import { describeStores } from '../../support/stores.js';

/**
 * What a stored replication packet derives, on both stores (issue 17): removals (deletions, merges
 * and their targets, also from earlier packets), the events of unresolved deletions and schema
 * sequence changes, and the packet's facts; the bodies of test/sync/replication.test.ts.
 */

describeStores('removals and events of a replication packet', (stores) => {
  const f = replicationFixture(stores);
  const { rowsOf, removals, events } = f;
  const store_ = f.store;
  const db = {
    rows: <T = Record<string, unknown>>(sql: string, ...args: unknown[]) => f.db().rows<T>(sql, ...args),
  };
  it('derives a deletion and a merge with its target from the same packet', async () => {
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    expect(await removals()).toEqual([
      { packet: 7, mbid: MORNING.gid, entity: 'release-group', kind: 'DELETED', mergedInto: null },
      // The merged artist's row is also deleted (upstream deletes every merge's source): one MERGED removal, no DELETED.
      { packet: 7, mbid: MOUNIR.gid, entity: 'artist', kind: 'MERGED', mergedInto: ED.gid },
    ]);
  });

  it('takes a removed entity out of the search index in its transaction, and back when the packet is stored again without it', async () => {
    const folder = await tempDir('lf-removal-search-');
    try {
      const line = JSON.stringify({
        id: MOUNIR.gid,
        name: 'Mohamed Mounir',
        'sort-name': 'Mounir, Mohamed',
        disambiguation: '',
      });
      const built = await writeJsonDump(join(folder.dir, 'feed'), {
        packet: 6,
        entity: 'artist',
        lines: [line],
      });
      await f.db().store.ingestDump({ packet: 6, entity: 'artist', archivePath: built.path, file: null });
      expect(await f.count('search_index')).toBe(1);
      await store_({ packet: 7, format: 'v2', rows: HOUR }); // merges Mohamed Mounir into Ed Sheeran
      expect(await f.count('search_index')).toBe(0);
      await store_({ packet: 7, format: 'v2', rows: [] });
      expect(await f.count('search_index')).toBe(1);
    } finally {
      await folder.cleanup();
    }
  });

  it('finds a merge target in an earlier packet, else leaves it null', async () => {
    await store_({
      packet: 5,
      format: 'v2',
      rows: [{ xid: 1, table: 'musicbrainz.release_group', op: 'i', newData: WISH }],
    });
    const merges: FixtureRow[] = [
      {
        xid: 2,
        table: 'musicbrainz.release_group_gid_redirect',
        op: 'i',
        newData: gidRedirectRow(MORNING.gid, WISH.id),
      },
      {
        xid: 2,
        table: 'musicbrainz.release_group_gid_redirect',
        op: 'i',
        newData: gidRedirectRow(MOUNIR.gid, 999),
      },
    ];
    await store_({ packet: 6, format: 'v1', rows: merges });
    expect(await removals()).toEqual([
      { packet: 6, mbid: MOUNIR.gid, entity: 'release-group', kind: 'MERGED', mergedInto: null },
      { packet: 6, mbid: MORNING.gid, entity: 'release-group', kind: 'MERGED', mergedInto: WISH.gid },
    ]);
  });

  it('resolves a v1 deletion (key columns only) through an earlier packet, reporting the rest as an event', async () => {
    await store_({
      packet: 5,
      format: 'v2',
      rows: [{ xid: 1, table: 'musicbrainz.artist', op: 'i', newData: ED }],
    });
    const deletions: FixtureRow[] = [
      { xid: 2, table: 'musicbrainz.artist', op: 'd', oldData: ED },
      { xid: 2, table: 'musicbrainz.artist', op: 'd', oldData: MOUNIR },
    ];
    const result = await store_({ packet: 6, format: 'v1', rows: deletions });
    expect(result).toMatchObject({ removals: 1, unresolvedDeletions: 1 });
    expect(await removals()).toEqual([
      { packet: 6, mbid: ED.gid, entity: 'artist', kind: 'DELETED', mergedInto: null },
    ]);
    expect(await events()).toEqual([
      {
        packet: 6,
        kind: 'removal-unresolved',
        message: expect.stringContaining('1 deleted entity row(s) of packet 6 have no known MBID') as unknown,
        at: NOW.toISOString(),
      },
    ]);
    expect((await events())[0]!.message).toContain('musicbrainz.artist id 12');
    await store_({ packet: 6, format: 'v1', rows: deletions });
    expect(await events()).toHaveLength(1);
  });

  it('records a schema sequence change as an event, once, without failing', async () => {
    await store_({ packet: 5, format: 'v2', rows: [], schemaSequence: 30 });
    const result = await store_({ packet: 6, format: 'v2', rows: HOUR, schemaSequence: 31 });
    expect(result.schemaChange).toEqual({ from: 30, to: 31, previousPacket: 5 });
    await store_({ packet: 6, format: 'v2', rows: HOUR, schemaSequence: 31 });
    expect(await events()).toEqual([
      {
        packet: 6,
        kind: 'schema-change',
        message: 'schema sequence changed from 30 (packet 5) to 31 at packet 6',
        at: NOW.toISOString(),
      },
    ]);
    expect((await store_({ packet: 7, format: 'v1', rows: [], schemaSequence: 31 })).schemaChange).toBeNull();
  });

  it('tolerates a missing pending_keys: keys are null', async () => {
    const result = await store_({ packet: 7, format: 'v2', rows: HOUR, omitKeys: true });
    expect(result.rowCount).toBe(5);
    expect((await rowsOf(7)).map((row) => row.keys)).toEqual([null, null, null, null, null]);
    expect(result.removals).toBe(2);
  });

  it('fills an existing packets row only where empty', async () => {
    await db.rows(
      `INSERT INTO packets (number, timestamp, schema_sequence, created_at) VALUES (7, '2026-05-11T21:14:00Z', NULL, 'x')`,
    );
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    expect(await db.rows('SELECT * FROM packets')).toEqual([
      {
        number: 7,
        timestamp: '2026-05-11T21:14:00Z',
        schema_sequence: 31,
        synced_at: null,
        created_at: 'x',
        dumps_seen_at: null,
      },
    ]);
  });
});

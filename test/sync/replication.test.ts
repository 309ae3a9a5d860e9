import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { ENTITY_ROW_TABLES_SQL } from '../../src/db/schema.js';
import type { RowChange } from '../../src/feed/replication/types.js';
import { iterateRowChanges, storeReplicationPacket } from '../../src/sync/replication.js';
import { ENTITY_TABLES } from '../../src/sync/replicationRemovals.js';
import {
  ED_SHEERAN_ROW as ED,
  type FixtureRow,
  gidRedirectRow,
  MOHAMED_MOUNIR_ROW as MOUNIR,
  pgText,
  type ReplicationPacketFixture,
  releaseGroupRow,
  writeReplicationPacket,
} from '../support/replicationArchives.js';

// Sample MBIDs and names from fixtures/samples/*.jsonl.
const WISH = releaseGroupRow({
  id: 21,
  gid: 'f17a0f30-8eb1-4322-b54e-fb71edb78d7c',
  name: 'Wish You Were Here',
});
const MORNING = releaseGroupRow({
  id: 22,
  gid: '9c8a949a-a218-4d93-8039-8d43e0a06d0b',
  name: 'Here’s to the Morning Glory',
});

const NOW = new Date('2026-05-11T22:00:00.000Z');

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'livefeed-replication-'));
  store = openStore(join(dir, 'livefeed.db'));
});
afterEach(async () => {
  store.close();
  await rm(dir, { recursive: true, force: true });
});

let folder = 0;
async function archive(fixture: ReplicationPacketFixture): Promise<string> {
  folder++;
  return writeReplicationPacket(join(dir, `feed-${folder}`), fixture);
}

async function store_(fixture: ReplicationPacketFixture) {
  return storeReplicationPacket(store, fixture.packet, await archive(fixture), { now: () => NOW });
}

const rowsOf = (packet: number): RowChange[] => [...iterateRowChanges(store, packet)];
const count = (table: string): number =>
  store.sqlite.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
const removals = () =>
  store.sqlite
    .prepare(
      'SELECT packet, mbid, entity, kind, merged_into AS mergedInto FROM removals ORDER BY packet, kind, mbid',
    )
    .all();
const events = () =>
  store.sqlite.prepare('SELECT packet, kind, message, at FROM events ORDER BY id').all() as Record<
    string,
    unknown
  >[];

/** An hour of edits: a renamed artist (tab and newline in the comment), a merge, a deletion, a new release group. */
const HOUR: FixtureRow[] = [
  {
    xid: 900,
    table: 'musicbrainz.artist',
    op: 'u',
    oldData: ED,
    newData: { ...ED, comment: 'UK\tsinger\nsongwriter \\o/' },
  },
  {
    xid: 901,
    table: 'musicbrainz.artist_gid_redirect',
    op: 'i',
    newData: gidRedirectRow(MOUNIR.gid, ED.id),
    quoteTable: true,
  },
  { xid: 901, table: 'musicbrainz.artist', op: 'd', oldData: MOUNIR, prettyJson: true },
  { xid: 902, table: 'musicbrainz.release_group', op: 'i', newData: WISH },
  { xid: 902, table: 'musicbrainz.release_group', op: 'd', oldData: MORNING },
];

describe('storeReplicationPacket', () => {
  it('stores a v2 packet into SQLite: rows, packet row, packets row', async () => {
    const result = await store_({
      packet: 7,
      format: 'v2',
      rows: HOUR,
      xidTimestamps: { 900: '2026-05-11 20:59:59.5+00' },
    });
    expect(result).toEqual({
      format: 'V2',
      replicationSequence: 7,
      schemaSequence: 31,
      timestamp: '2026-05-11T21:14:26.878674Z',
      rowCount: 5,
      tables: [
        { table: 'musicbrainz.artist', inserts: 0, updates: 1, deletes: 1 },
        { table: 'musicbrainz.artist_gid_redirect', inserts: 1, updates: 0, deletes: 0 },
        { table: 'musicbrainz.release_group', inserts: 1, updates: 0, deletes: 1 },
      ],
      removals: 2,
      schemaChange: null,
      unresolvedDeletions: 0,
    });
    const rows = rowsOf(7);
    expect(rows[0]).toEqual({
      seqid: 1001,
      xid: 900,
      table: 'musicbrainz.artist',
      op: 'u',
      keys: { id: 11 },
      oldData: ED,
      newData: { ...ED, comment: 'UK\tsinger\nsongwriter \\o/' },
      timestamp: '2026-05-11T20:59:59.500000Z',
    });
    expect(rows[1]).toMatchObject({
      table: 'musicbrainz.artist_gid_redirect',
      keys: { gid: MOUNIR.gid },
      oldData: null,
    });
    expect(rows[2]).toMatchObject({ op: 'd', keys: { id: 12 }, oldData: MOUNIR, newData: null });
    expect(rows[2]!.timestamp).toBe('2026-05-11T21:14:26.878674Z');
    expect(store.sqlite.prepare('SELECT * FROM replication_packets').get()).toEqual({
      packet: 7,
      status: 'SYNCED',
      format: 'V2',
      schema_sequence: 31,
      timestamp: '2026-05-11T21:14:26.878674Z',
      dbmirror_version: 2,
      row_count: 5,
      file_name: 'replication-7-v2.tar.bz2',
      error: null,
      attempts: 0,
      next_retry_at: null,
      missing_since: null,
      signature_missing_since: null,
      updated_at: NOW.toISOString(),
    });
    expect(store.sqlite.prepare('SELECT * FROM packets').all()).toEqual([
      {
        number: 7,
        timestamp: '2026-05-11T21:14:26.878674Z',
        schema_sequence: 31,
        synced_at: null,
        created_at: NOW.toISOString(),
      },
    ]);
  });

  it('keeps JSON types in v2 and text in v1; both give the same changes', async () => {
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    await store_({ packet: 8, format: 'v1', rows: HOUR });
    const v2 = rowsOf(7);
    const v1 = rowsOf(8);
    const asText = (data: Record<string, unknown> | null) =>
      data && Object.fromEntries(Object.entries(data).map(([column, value]) => [column, pgText(value)]));
    const shape = (row: RowChange) => ({ seqid: row.seqid, xid: row.xid, table: row.table, op: row.op });
    expect(v1.map(shape)).toEqual(v2.map(shape));
    for (const [i, row] of v1.entries()) {
      const twin = v2[i]!;
      // New rows are the same, as text.
      expect(row.newData).toEqual(asText(twin.newData));
      if (row.op === 'i') {
        expect(row.keys).toBeNull(); // v1 names no key for inserts
      } else {
        expect(row.keys).toEqual(asText(twin.keys));
        // v1 keeps only the key columns of the old row.
        expect(row.oldData).toEqual(row.op === 'd' ? asText(twin.keys) : null);
      }
    }
    expect(v2[0]!.newData).toMatchObject({ id: 11, ended: false, area: null });
    expect(v1[0]!.newData).toMatchObject({
      id: '11',
      ended: 'f',
      area: null,
      comment: 'UK\tsinger\nsongwriter \\o/',
    });
    expect(v1.every((row) => row.timestamp === null)).toBe(true);
  });

  it('orders rows as upstream applies them: transactions by highest seqid, rows by seqid', async () => {
    const row = (seqid: number, xid: number): FixtureRow => ({
      seqid,
      xid,
      table: 'musicbrainz.artist',
      op: 'u',
      oldData: ED,
      newData: { ...ED, edits_pending: seqid },
    });
    const rows = [row(1, 30), row(2, 20), row(3, 30), row(4, 10), row(5, 20), row(6, 30)];
    for (const format of ['v1', 'v2'] as const) {
      const packet = format === 'v1' ? 1 : 2;
      await store_({ packet, format, rows });
      expect(rowsOf(packet).map((r) => r.seqid)).toEqual([4, 2, 5, 1, 3, 6]);
      const ords = store.sqlite
        .prepare('SELECT ord FROM row_changes WHERE packet = ? ORDER BY ord')
        .pluck()
        .all(packet);
      expect(ords).toEqual([0, 1, 2, 3, 4, 5]);
    }
  });

  it('rejects a REPLICATION_SEQUENCE mismatch, naming both numbers, storing nothing', async () => {
    const path = await archive({ packet: 7, format: 'v2', rows: HOUR, replicationSequence: 8 });
    await expect(storeReplicationPacket(store, 7, path)).rejects.toThrow(
      'replication packet 7 (replication-7-v2.tar.bz2): REPLICATION_SEQUENCE is 8, expected 7',
    );
    for (const table of ['row_changes', 'replication_packets', 'removals', 'packets', 'events'])
      expect(count(table)).toBe(0);
    expect(store.sqlite.inTransaction).toBe(false);
  });

  it('rejects a member outside mbdump/ and stores nothing', async () => {
    const path = await archive({
      packet: 7,
      format: 'v1',
      rows: HOUR,
      extraMembers: [{ name: '../../etc/evil', content: 'x' }],
    });
    await expect(storeReplicationPacket(store, 7, path)).rejects.toThrow(
      'unexpected member "../../etc/evil"',
    );
    for (const table of ['row_changes', 'replication_packets', 'removals', 'packets'])
      expect(count(table)).toBe(0);
  });

  it('rejects a row image that is not a JSON object, naming member and line, storing nothing', async () => {
    const rows: FixtureRow[] = [
      ...HOUR,
      { xid: 1, table: 'musicbrainz.artist', op: 'i', newData: [1, 2] as never },
    ];
    await expect(store_({ packet: 7, format: 'v2', rows })).rejects.toThrow(
      'replication packet 7 (replication-7-v2.tar.bz2): mbdump/pending_data line 6: newdata is not a JSON object',
    );
    expect(count('row_changes')).toBe(0);
  });

  it('stores nothing when aborted, before or while reading', async () => {
    const path = await archive({ packet: 7, format: 'v2', rows: HOUR });
    const before = new AbortController();
    before.abort(new Error('shutting down'));
    await expect(storeReplicationPacket(store, 7, path, { signal: before.signal })).rejects.toThrow(
      'shutting down',
    );
    const during = new AbortController();
    const storing = storeReplicationPacket(store, 7, path, { signal: during.signal });
    during.abort(new Error('shutting down'));
    await expect(storing).rejects.toMatchObject({ name: 'AbortError' });
    expect(count('row_changes') + count('replication_packets')).toBe(0);
    expect(store.sqlite.inTransaction).toBe(false);
  });

  it('replaces the earlier rows of a packet when stored again', async () => {
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    expect(count('row_changes')).toBe(5);
    expect(count('removals')).toBe(2);
    const result = await store_({ packet: 7, format: 'v1', rows: HOUR.slice(0, 1) });
    expect(result).toMatchObject({ format: 'V1', rowCount: 1, removals: 0 });
    expect(rowsOf(7)).toHaveLength(1);
    expect(count('removals')).toBe(0);
    expect(
      store.sqlite.prepare('SELECT format, row_count, dbmirror_version FROM replication_packets').get(),
    ).toEqual({
      format: 'V1',
      row_count: 1,
      dbmirror_version: null,
    });
  });

  it('derives a deletion and a merge with its target from the same packet', async () => {
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    expect(removals()).toEqual([
      { packet: 7, mbid: MORNING.gid, entity: 'release-group', kind: 'DELETED', mergedInto: null },
      // The merged artist's row is also deleted (upstream deletes every merge's source): one MERGED removal, no DELETED.
      { packet: 7, mbid: MOUNIR.gid, entity: 'artist', kind: 'MERGED', mergedInto: ED.gid },
    ]);
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
    expect(removals()).toEqual([
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
    expect(removals()).toEqual([
      { packet: 6, mbid: ED.gid, entity: 'artist', kind: 'DELETED', mergedInto: null },
    ]);
    expect(events()).toEqual([
      {
        packet: 6,
        kind: 'removal-unresolved',
        message: expect.stringContaining('1 deleted entity row(s) of packet 6 have no known MBID') as unknown,
        at: NOW.toISOString(),
      },
    ]);
    expect(events()[0]!.message).toContain('musicbrainz.artist id 12');
    await store_({ packet: 6, format: 'v1', rows: deletions });
    expect(events()).toHaveLength(1);
  });

  it('records a schema sequence change as an event, once, without failing', async () => {
    await store_({ packet: 5, format: 'v2', rows: [], schemaSequence: 30 });
    const result = await store_({ packet: 6, format: 'v2', rows: HOUR, schemaSequence: 31 });
    expect(result.schemaChange).toEqual({ from: 30, to: 31, previousPacket: 5 });
    await store_({ packet: 6, format: 'v2', rows: HOUR, schemaSequence: 31 });
    expect(events()).toEqual([
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
    expect(rowsOf(7).map((row) => row.keys)).toEqual([null, null, null, null, null]);
    expect(result.removals).toBe(2);
  });

  it('fills an existing packets row only where empty', async () => {
    store.sqlite
      .prepare(
        `INSERT INTO packets (number, timestamp, schema_sequence, created_at) VALUES (7, '2026-05-11T21:14:00Z', NULL, 'x')`,
      )
      .run();
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    expect(store.sqlite.prepare('SELECT * FROM packets').get()).toEqual({
      number: 7,
      timestamp: '2026-05-11T21:14:00Z',
      schema_sequence: 31,
      synced_at: null,
      created_at: 'x',
    });
  });

  it('indexes exactly the eleven entity tables', () => {
    const listed = [...ENTITY_ROW_TABLES_SQL.matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(listed).toEqual(ENTITY_TABLES);
    expect(ENTITY_TABLES).toContain('musicbrainz.release_group');
  });
});

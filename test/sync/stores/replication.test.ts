import { expect, it } from 'vitest';
import type { RowChange } from '../../../src/feed/replication/types.js';
import {
  ED_SHEERAN_ROW as ED,
  type FixtureRow,
  MOHAMED_MOUNIR_ROW as MOUNIR,
  pgText,
} from '../../support/replicationArchives.js';
import { HOUR, NOW, replicationFixture } from '../../support/replicationStores.js';
import { describeStores } from '../../support/stores.js';

/**
 * Storing a replication packet on both stores (issue 17): the bodies of
 * test/sync/replication.test.ts through the sync's ReplicationRecords, rows read back with the same
 * statements (test/support/replicationStores.ts). Removals and events: replicationRemovals.test.ts.
 */

describeStores('storing a replication packet', (stores) => {
  const f = replicationFixture(stores);
  const { rowsOf, count, replication, archive } = f;
  const store_ = f.store;
  const db = {
    rows: <T = Record<string, unknown>>(sql: string, ...args: unknown[]) => f.db().rows<T>(sql, ...args),
  };
  it('stores a v2 packet: rows, packet row, packets row', async () => {
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
    const rows = await rowsOf(7);
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
    expect(await db.rows('SELECT * FROM replication_packets')).toEqual([
      {
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
      },
    ]);
    expect(await db.rows('SELECT * FROM packets')).toEqual([
      {
        number: 7,
        timestamp: '2026-05-11T21:14:26.878674Z',
        schema_sequence: 31,
        synced_at: null,
        created_at: NOW.toISOString(),
        dumps_seen_at: null,
      },
    ]);
  });

  it('keeps JSON types in v2 and text in v1; both give the same changes', async () => {
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    await store_({ packet: 8, format: 'v1', rows: HOUR });
    const v2 = await rowsOf(7);
    const v1 = await rowsOf(8);
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
      expect((await rowsOf(packet)).map((r) => r.seqid)).toEqual([4, 2, 5, 1, 3, 6]);
      const ords = await db.rows<{ ord: number }>(
        'SELECT ord FROM row_changes WHERE packet = ? ORDER BY ord',
        packet,
      );
      expect(ords.map((r) => r.ord)).toEqual([0, 1, 2, 3, 4, 5]);
    }
  });

  it('rejects a REPLICATION_SEQUENCE mismatch, naming both numbers, storing nothing', async () => {
    const path = await archive({ packet: 7, format: 'v2', rows: HOUR, replicationSequence: 8 });
    await expect(replication().storeReplicationPacket(7, path, {})).rejects.toThrow(
      'replication packet 7 (replication-7-v2.tar.bz2): REPLICATION_SEQUENCE is 8, expected 7',
    );
    for (const table of ['row_changes', 'replication_packets', 'removals', 'packets', 'events'])
      expect(await count(table)).toBe(0);
    expect(f.db().idle()).toBe(true);
  });

  it('rejects a member outside mbdump/ and stores nothing', async () => {
    const path = await archive({
      packet: 7,
      format: 'v1',
      rows: HOUR,
      extraMembers: [{ name: '../../etc/evil', content: 'x' }],
    });
    await expect(replication().storeReplicationPacket(7, path, {})).rejects.toThrow(
      'unexpected member "../../etc/evil"',
    );
    for (const table of ['row_changes', 'replication_packets', 'removals', 'packets'])
      expect(await count(table)).toBe(0);
  });

  it('rejects a row image that is not a JSON object, naming member and line, storing nothing', async () => {
    const rows: FixtureRow[] = [
      ...HOUR,
      { xid: 1, table: 'musicbrainz.artist', op: 'i', newData: [1, 2] as never },
    ];
    await expect(store_({ packet: 7, format: 'v2', rows })).rejects.toThrow(
      'replication packet 7 (replication-7-v2.tar.bz2): mbdump/pending_data line 6: newdata is not a JSON object',
    );
    expect(await count('row_changes')).toBe(0);
  });

  it('stores nothing when aborted, before or while reading', async () => {
    const path = await archive({ packet: 7, format: 'v2', rows: HOUR });
    const before = new AbortController();
    before.abort(new Error('shutting down'));
    await expect(replication().storeReplicationPacket(7, path, { signal: before.signal })).rejects.toThrow(
      'shutting down',
    );
    const during = new AbortController();
    const storing = replication().storeReplicationPacket(7, path, { signal: during.signal });
    during.abort(new Error('shutting down'));
    await expect(storing).rejects.toMatchObject({ name: 'AbortError' });
    expect((await count('row_changes')) + (await count('replication_packets'))).toBe(0);
    expect(f.db().idle()).toBe(true);
  });

  it('stages each packet afresh: the rows of one stored or refused before never reach the next', async () => {
    // The same seqids in every packet: a row left staged would collide ("duplicate seqid").
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    const bad: FixtureRow[] = [
      ...HOUR,
      { xid: 1, table: 'musicbrainz.artist', op: 'i', newData: [1, 2] as never },
    ];
    await expect(store_({ packet: 8, format: 'v2', rows: bad })).rejects.toThrow(
      'newdata is not a JSON object',
    );
    await store_({ packet: 9, format: 'v1', rows: HOUR });
    await store_({ packet: 10, format: 'v2', rows: HOUR });
    expect(await rowsOf(10)).toEqual(await rowsOf(7));
    expect((await rowsOf(9)).map((r) => r.seqid)).toEqual((await rowsOf(7)).map((r) => r.seqid));
    expect(await rowsOf(8)).toEqual([]);
    expect(await count('row_changes')).toBe(15);
  });

  it('replaces the earlier rows of a packet when stored again', async () => {
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    await store_({ packet: 7, format: 'v2', rows: HOUR });
    expect(await count('row_changes')).toBe(5);
    expect(await count('removals')).toBe(2);
    const result = await store_({ packet: 7, format: 'v1', rows: HOUR.slice(0, 1) });
    expect(result).toMatchObject({ format: 'V1', rowCount: 1, removals: 0 });
    expect(await rowsOf(7)).toHaveLength(1);
    expect(await count('removals')).toBe(0);
    expect(await db.rows('SELECT format, row_count, dbmirror_version FROM replication_packets')).toEqual([
      { format: 'V1', row_count: 1, dbmirror_version: null },
    ]);
  });
});

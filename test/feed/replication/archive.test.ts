import { describe, expect, it } from 'vitest';
import { readReplicationArchive } from '../../../src/feed/replication/archive.js';
import { ED_SHEERAN_ROW as ED } from '../../support/replicationArchives.js';
import { recorder, usePacketFolder } from '../../support/replicationReader.js';

// What the reader reads; what it refuses: archiveErrors.test.ts.
const folder = usePacketFolder();

describe('readReplicationArchive', () => {
  it('reads a v2 packet: metadata, then each data member line by line in archive order', async () => {
    const path = await folder.packet({
      format: 'v2',
      schemaSequence: 31,
      timestamp: '2026-05-11 21:14:26.878674+00',
    });
    const { calls, sink } = recorder();
    const info = await readReplicationArchive(path, sink, {
      packet: 42,
      fileName: 'replication-42-v2.tar.bz2',
    });
    expect(info).toEqual({
      format: 'V2',
      replicationSequence: 42,
      schemaSequence: 31,
      timestamp: '2026-05-11T21:14:26.878674Z',
      dbmirrorVersion: 2,
      members: {
        pendingData: 'mbdump/pending_data',
        pendingKeys: 'mbdump/pending_keys',
        pendingTs: 'mbdump/pending_ts',
      },
      hasKeys: true,
      lineCounts: { 'mbdump/pending_data': 3, 'mbdump/pending_keys': 2, 'mbdump/pending_ts': 2 },
    });
    expect(calls.map(([method, , line]) => `${method}:${line}`)).toEqual([
      'pendingData:1',
      'pendingData:2',
      'pendingData:3',
      'pendingKeys:1',
      'pendingKeys:2',
      'pendingTs:1',
      'pendingTs:2',
    ]);
    expect(calls[1]![1]).toMatchObject({
      seqid: 1002,
      table: 'musicbrainz.artist_gid_redirect',
      op: 'i',
      xid: 500,
      oldJson: null,
    });
    expect(JSON.parse((calls[0]![1] as { newJson: string }).newJson)).toEqual({
      ...ED,
      comment: 'tab\there',
    });
    expect(calls[3]![1]).toEqual({ table: 'musicbrainz.artist', columns: ['id'] });
  });

  it('tells the format from the members, not the file name', async () => {
    const v2UnderTestName = await folder.packet({ format: 'v2', deployment: 'test' });
    expect(v2UnderTestName).toMatch(/replication-42\.tar\.bz2$/);
    expect((await readReplicationArchive(v2UnderTestName, recorder().sink, { packet: 42 })).format).toBe(
      'V2',
    );
    const v1UnderProductionName = await folder.packet({ format: 'v1', deployment: 'production' });
    expect(v1UnderProductionName).toMatch(/replication-42-v2\.tar\.bz2$/);
    expect(
      (await readReplicationArchive(v1UnderProductionName, recorder().sink, { packet: 42 })).format,
    ).toBe('V1');
  });

  it('reads a v1 packet, including the very old member names', async () => {
    for (const oldV1Names of [false, true]) {
      const { calls, sink } = recorder();
      const info = await readReplicationArchive(await folder.packet({ format: 'v1', oldV1Names }), sink, {
        packet: 42,
      });
      expect(info.format).toBe('V1');
      expect(info.dbmirrorVersion).toBeNull();
      expect(info.members).toEqual(
        oldV1Names
          ? { v1Pending: 'mbdump/Pending', v1PendingData: 'mbdump/PendingData' }
          : { v1Pending: 'mbdump/dbmirror_pending', v1PendingData: 'mbdump/dbmirror_pendingdata' },
      );
      expect(calls.filter(([method]) => method === 'v1Pending')).toHaveLength(3);
      // update: key + value row; insert: value row; delete: key row
      expect(
        calls
          .filter(([method]) => method === 'v1PendingData')
          .map(([, r]) => (r as { isKey: boolean }).isKey),
      ).toEqual([true, false, false, true]);
      expect(calls[0]![1]).toEqual({ seqid: 1001, table: 'musicbrainz.artist', op: 'u', xid: 500 });
    }
  });

  it('tolerates a missing pending_keys', async () => {
    const info = await readReplicationArchive(
      await folder.packet({ format: 'v2', omitKeys: true }),
      recorder().sink,
      { packet: 42 },
    );
    expect(info.hasKeys).toBe(false);
    expect(info.members.pendingKeys).toBeUndefined();
  });

  it('reads an empty packet (an hour without changes)', async () => {
    const info = await readReplicationArchive(
      await folder.packet({ format: 'v1', rows: [] }),
      recorder().sink,
      {
        packet: 42,
      },
    );
    expect(info.lineCounts).toEqual({ 'mbdump/dbmirror_pending': 0, 'mbdump/dbmirror_pendingdata': 0 });
  });

  it('honours an aborted signal', async () => {
    const path = await folder.packet({ format: 'v2' });
    const signal = AbortSignal.abort();
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42, signal })).rejects.toMatchObject(
      {
        name: 'AbortError',
      },
    );
  });
});

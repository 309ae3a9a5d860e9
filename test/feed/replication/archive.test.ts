import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArchiveError } from '../../../src/feed/errors.js';
import { ReplicationLineError, readReplicationArchive } from '../../../src/feed/replication/archive.js';
import type { ReplicationSink } from '../../../src/feed/replication/types.js';
import {
  ED_SHEERAN_ROW as ED,
  type FixtureRow,
  gidRedirectRow,
  MOHAMED_MOUNIR_ROW as MOUNIR,
  type ReplicationPacketFixture,
  writeReplicationPacket,
} from '../../support/replicationArchives.js';

const ROWS: FixtureRow[] = [
  { xid: 500, table: 'musicbrainz.artist', op: 'u', oldData: ED, newData: { ...ED, comment: 'tab\there' } },
  {
    xid: 500,
    table: 'musicbrainz.artist_gid_redirect',
    op: 'i',
    newData: gidRedirectRow(MOUNIR.gid, ED.id),
    quoteTable: true,
  },
  { xid: 501, table: 'musicbrainz.artist', op: 'd', oldData: MOUNIR },
];

/** A sink that records every call as [method, record, line]. */
function recorder(throwAt?: { method: keyof ReplicationSink; line: number }) {
  const calls: [string, unknown, number][] = [];
  const record =
    (method: keyof ReplicationSink) =>
    (value: unknown, line: number): void => {
      if (throwAt?.method === method && throwAt.line === line) throw new Error('sink refused');
      calls.push([method, value, line]);
    };
  const sink: ReplicationSink = {
    pendingData: record('pendingData'),
    pendingKeys: record('pendingKeys'),
    pendingTs: record('pendingTs'),
    v1Pending: record('v1Pending'),
    v1PendingData: record('v1PendingData'),
  };
  return { calls, sink };
}

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'livefeed-archive-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let counter = 0;
/** Writes a fixture into its own folder (names repeat across tests) and returns its path. */
async function packet(
  fixture: Partial<ReplicationPacketFixture> & Pick<ReplicationPacketFixture, 'format'>,
): Promise<string> {
  counter++;
  return writeReplicationPacket(join(root, String(counter)), { packet: 42, rows: ROWS, ...fixture });
}

describe('readReplicationArchive', () => {
  it('reads a v2 packet: metadata, then each data member line by line in archive order', async () => {
    const path = await packet({
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
    const v2UnderTestName = await packet({ format: 'v2', deployment: 'test' });
    expect(v2UnderTestName).toMatch(/replication-42\.tar\.bz2$/);
    expect((await readReplicationArchive(v2UnderTestName, recorder().sink, { packet: 42 })).format).toBe(
      'V2',
    );
    const v1UnderProductionName = await packet({ format: 'v1', deployment: 'production' });
    expect(v1UnderProductionName).toMatch(/replication-42-v2\.tar\.bz2$/);
    expect(
      (await readReplicationArchive(v1UnderProductionName, recorder().sink, { packet: 42 })).format,
    ).toBe('V1');
  });

  it('reads a v1 packet, including the very old member names', async () => {
    for (const oldV1Names of [false, true]) {
      const { calls, sink } = recorder();
      const info = await readReplicationArchive(await packet({ format: 'v1', oldV1Names }), sink, {
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
      await packet({ format: 'v2', omitKeys: true }),
      recorder().sink,
      { packet: 42 },
    );
    expect(info.hasKeys).toBe(false);
    expect(info.members.pendingKeys).toBeUndefined();
  });

  it('rejects a REPLICATION_SEQUENCE other than the packet as soon as it is read', async () => {
    const { calls, sink } = recorder();
    const path = await packet({ format: 'v2', replicationSequence: 43 });
    const read = readReplicationArchive(path, sink, { packet: 42, fileName: 'replication-42-v2.tar.bz2' });
    await expect(read).rejects.toThrow(ArchiveError);
    await expect(read).rejects.toThrow(
      'replication packet 42 (replication-42-v2.tar.bz2): REPLICATION_SEQUENCE is 43, expected 42',
    );
    expect(calls).toEqual([]);
  });

  it.each([
    ['a member outside mbdump/', '../evil'],
    ['an absolute path', '/etc/passwd'],
    ['an unknown mbdump/ member', 'mbdump/pending_everything'],
    ['a traversal inside mbdump/', 'mbdump/../x'],
    ['an unknown top-level file', 'NOTES'],
  ])('rejects %s, naming it', async (_name, member) => {
    const path = await packet({ format: 'v2', extraMembers: [{ name: member, content: 'x\n' }] });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(
      `replication packet 42: unexpected member ${JSON.stringify(member)}`,
    );
  });

  it('rejects a repeated data member', async () => {
    const path = await packet({ format: 'v1', extraMembers: [{ name: 'mbdump/Pending', content: '' }] });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(
      'mbdump/Pending repeats mbdump/dbmirror_pending',
    );
  });

  it('names packet, member and line of a line it cannot parse', async () => {
    const bad = { xid: 9, table: 'musicbrainz.artist', op: 'x' as 'i', newData: ED };
    const path = await packet({ format: 'v2', rows: [...ROWS, bad] });
    const read = readReplicationArchive(path, recorder().sink, {
      packet: 42,
      fileName: 'replication-42-v2.tar.bz2',
    });
    await expect(read).rejects.toBeInstanceOf(ReplicationLineError);
    await expect(read).rejects.toThrow(
      'replication packet 42 (replication-42-v2.tar.bz2): mbdump/pending_data line 4: unknown op "x"',
    );
  });

  it('names packet, member and line when the sink refuses a record', async () => {
    const path = await packet({ format: 'v1' });
    const read = readReplicationArchive(path, recorder({ method: 'v1PendingData', line: 2 }).sink, {
      packet: 42,
    });
    await expect(read).rejects.toMatchObject({ packet: 42, member: 'mbdump/dbmirror_pendingdata', line: 2 });
    await expect(read).rejects.toThrow('mbdump/dbmirror_pendingdata line 2: sink refused');
  });

  it.each([
    ['DBMIRROR_VERSION other than 2', { dbmirrorVersion: 3 }, 'unsupported DBMIRROR_VERSION 3'],
    [
      'v2 members without DBMIRROR_VERSION',
      { dbmirrorVersion: null },
      'member mbdump/pending_data but no DBMIRROR_VERSION',
    ],
    [
      'v1 members in a v2 packet',
      { extraMembers: [{ name: 'mbdump/dbmirror_pending', content: '' }] },
      'DBMIRROR_VERSION 2 but v1 member mbdump/dbmirror_pending',
    ],
  ])('rejects %s', async (_name, fixture, message) => {
    const path = await packet({ format: 'v2', ...fixture });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(message);
  });

  it.each([
    ['v1 without dbmirror_pendingdata', 'v1', 'mbdump/dbmirror_pendingdata', 'no replication data'],
    ['v2 without pending_data', 'v2', 'mbdump/pending_data', 'member mbdump/pending_data is missing'],
    ['no TIMESTAMP', 'v2', 'TIMESTAMP', 'member TIMESTAMP is missing'],
    ['no SCHEMA_SEQUENCE', 'v1', 'SCHEMA_SEQUENCE', 'member SCHEMA_SEQUENCE is missing'],
    ['no REPLICATION_SEQUENCE', 'v1', 'REPLICATION_SEQUENCE', 'member REPLICATION_SEQUENCE is missing'],
  ] as const)('rejects a packet with %s', async (_name, format, omitted, message) => {
    const path = await packet({ format, omitMembers: [omitted] });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(message);
  });

  it('rejects a repeated metadata member', async () => {
    const path = await packet({
      format: 'v2',
      extraMembers: [{ name: 'TIMESTAMP', content: '2026-05-11 22:00:00+00\n' }],
    });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(
      'member TIMESTAMP appears twice',
    );
  });

  it.each([
    ['accepts an end-of-data marker', '501\t2026-05-11 21:00:00+00\n\\.\n', null],
    [
      'rejects a line after the end-of-data marker',
      '\\.\n501\t2026-05-11 21:00:00+00\n',
      'line 2: line after the end-of-data marker',
    ],
    [
      'rejects an empty line, naming it',
      '501\t2026-05-11 21:00:00+00\n\n',
      'mbdump/pending_ts line 2: expected 2 columns, found 1',
    ],
  ])('%s', async (_name, content, message) => {
    const replaced = {
      omitMembers: ['mbdump/pending_ts'],
      extraMembers: [{ name: 'mbdump/pending_ts', content }],
    };
    const read = readReplicationArchive(await packet({ format: 'v2', ...replaced }), recorder().sink, {
      packet: 42,
    });
    if (message) await expect(read).rejects.toThrow(message);
    else expect((await read).lineCounts['mbdump/pending_ts']).toBe(1);
  });

  it('reads an empty packet (an hour without changes)', async () => {
    const info = await readReplicationArchive(await packet({ format: 'v1', rows: [] }), recorder().sink, {
      packet: 42,
    });
    expect(info.lineCounts).toEqual({ 'mbdump/dbmirror_pending': 0, 'mbdump/dbmirror_pendingdata': 0 });
  });

  it('rejects a corrupt or truncated archive, naming the packet', async () => {
    const whole = await readFile(await packet({ format: 'v2' }));
    const cases = [
      Buffer.from('<html>Not found</html>'),
      Buffer.from('BZh91AY&SYnot bzip2'),
      whole.subarray(0, whole.length >> 1),
    ];
    for (const [i, bytes] of cases.entries()) {
      const path = join(root, `corrupt-${i}.tar.bz2`);
      await writeFile(path, bytes);
      await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(
        /^replication packet 42: corrupt archive \(/,
      );
    }
  });

  it('honours an aborted signal', async () => {
    const path = await packet({ format: 'v2' });
    const signal = AbortSignal.abort();
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42, signal })).rejects.toMatchObject(
      {
        name: 'AbortError',
      },
    );
  });
});

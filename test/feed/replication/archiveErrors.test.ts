import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchiveError } from '../../../src/feed/errors.js';
import { ReplicationLineError, readReplicationArchive } from '../../../src/feed/replication/archive.js';
import { ED_SHEERAN_ROW as ED } from '../../support/replicationArchives.js';
import { ROWS, recorder, usePacketFolder } from '../../support/replicationReader.js';

// What the replication packet reader refuses, each time naming the packet (and member and line).
const folder = usePacketFolder();

describe('readReplicationArchive refuses', () => {
  it('rejects a REPLICATION_SEQUENCE other than the packet as soon as it is read', async () => {
    const { calls, sink } = recorder();
    const path = await folder.packet({ format: 'v2', replicationSequence: 43 });
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
    const path = await folder.packet({ format: 'v2', extraMembers: [{ name: member, content: 'x\n' }] });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(
      `replication packet 42: unexpected member ${JSON.stringify(member)}`,
    );
  });

  it('rejects a repeated data member', async () => {
    const path = await folder.packet({
      format: 'v1',
      extraMembers: [{ name: 'mbdump/Pending', content: '' }],
    });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(
      'mbdump/Pending repeats mbdump/dbmirror_pending',
    );
  });

  it('names packet, member and line of a line it cannot parse', async () => {
    const bad = { xid: 9, table: 'musicbrainz.artist', op: 'x' as 'i', newData: ED };
    const path = await folder.packet({ format: 'v2', rows: [...ROWS, bad] });
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
    const path = await folder.packet({ format: 'v1' });
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
    const path = await folder.packet({ format: 'v2', ...fixture });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(message);
  });

  it.each([
    ['v1 without dbmirror_pendingdata', 'v1', 'mbdump/dbmirror_pendingdata', 'no replication data'],
    ['v2 without pending_data', 'v2', 'mbdump/pending_data', 'member mbdump/pending_data is missing'],
    ['no TIMESTAMP', 'v2', 'TIMESTAMP', 'member TIMESTAMP is missing'],
    ['no SCHEMA_SEQUENCE', 'v1', 'SCHEMA_SEQUENCE', 'member SCHEMA_SEQUENCE is missing'],
    ['no REPLICATION_SEQUENCE', 'v1', 'REPLICATION_SEQUENCE', 'member REPLICATION_SEQUENCE is missing'],
  ] as const)('rejects a packet with %s', async (_name, format, omitted, message) => {
    const path = await folder.packet({ format, omitMembers: [omitted] });
    await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(message);
  });

  it('rejects a repeated metadata member', async () => {
    const path = await folder.packet({
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
    const read = readReplicationArchive(await folder.packet({ format: 'v2', ...replaced }), recorder().sink, {
      packet: 42,
    });
    if (message) await expect(read).rejects.toThrow(message);
    else expect((await read).lineCounts['mbdump/pending_ts']).toBe(1);
  });

  it('rejects a corrupt or truncated archive, naming the packet', async () => {
    const whole = await readFile(await folder.packet({ format: 'v2' }));
    const cases = [
      Buffer.from('<html>Not found</html>'),
      Buffer.from('BZh91AY&SYnot bzip2'),
      whole.subarray(0, whole.length >> 1),
    ];
    for (const [i, bytes] of cases.entries()) {
      const path = join(folder.root(), `corrupt-${i}.tar.bz2`);
      await writeFile(path, bytes);
      await expect(readReplicationArchive(path, recorder().sink, { packet: 42 })).rejects.toThrow(
        /^replication packet 42: corrupt archive \(/,
      );
    }
  });
});

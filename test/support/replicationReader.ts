import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { ReplicationSink } from '../../src/feed/replication/types.js';
import {
  ED_SHEERAN_ROW as ED,
  type FixtureRow,
  gidRedirectRow,
  MOHAMED_MOUNIR_ROW as MOUNIR,
  type ReplicationPacketFixture,
  writeReplicationPacket,
} from './replicationArchives.js';

/**
 * What the replication packet reader's tests (test/feed/replication/archive*.test.ts) read: three
 * rows of two transactions (an update with a tab, a quoted table name, a deletion), a sink that
 * records every call, and packets written into a folder of the suite.
 */

/** The rows of every packet {@link usePacketFolder} writes unless told otherwise. */
export const ROWS: FixtureRow[] = [
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

/** A sink that records every call as [method, record, line]; it throws at `throwAt`. */
export function recorder(throwAt?: { method: keyof ReplicationSink; line: number }) {
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

/** A temporary folder for the suite (hooks registered here) and a writer of packet 42 into it. */
export function usePacketFolder() {
  let root: string | undefined;
  let counter = 0;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'livefeed-archive-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });
  return {
    root: () => root!,
    /** Writes a fixture into its own folder (names repeat across tests) and returns its path. */
    packet(
      fixture: Partial<ReplicationPacketFixture> & Pick<ReplicationPacketFixture, 'format'>,
    ): Promise<string> {
      counter++;
      return writeReplicationPacket(join(root!, String(counter)), { packet: 42, rows: ROWS, ...fixture });
    },
  };
}

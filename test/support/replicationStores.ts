import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { RowChange } from '../../src/feed/replication/types.js';
import type { ReplicationRecords } from '../../src/sync/syncStore.js';
import { tempDir } from './harness.js';
import {
  ED_SHEERAN_ROW as ED,
  type FixtureRow,
  gidRedirectRow,
  MOHAMED_MOUNIR_ROW as MOUNIR,
  type ReplicationPacketFixture,
  releaseGroupRow,
  writeReplicationPacket,
} from './replicationArchives.js';
import type { StoreKind, TestDatabase } from './stores.js';

/**
 * Replication packets stored on either store (test/sync/stores/replication*.test.ts): the fixture
 * rows of test/sync/replication.test.ts and, per test, a fresh database with readers of what was
 * stored. JSON columns come back as JSON text from SQLite and as jsonb from PostgreSQL: both are
 * read as objects.
 */

// Sample MBIDs and names from fixtures/samples/*.jsonl.
export const WISH = releaseGroupRow({
  id: 21,
  gid: 'f17a0f30-8eb1-4322-b54e-fb71edb78d7c',
  name: 'Wish You Were Here',
});
export const MORNING = releaseGroupRow({
  id: 22,
  gid: '9c8a949a-a218-4d93-8039-8d43e0a06d0b',
  name: 'Here’s to the Morning Glory',
});

/** The clock of every store. */
export const NOW = new Date('2026-05-11T22:00:00.000Z');

/** An hour of edits: a renamed artist (tab and newline in the comment), a merge, a deletion, a new release group. */
export const HOUR: FixtureRow[] = [
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

const json = (value: unknown) =>
  value === null
    ? null
    : ((typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>);

/** What a test of a stored replication packet works with (see {@link replicationFixture}). */
export interface ReplicationFixture {
  db(): TestDatabase;
  /** Writes `fixture` as an archive and stores it at {@link NOW}. */
  store(fixture: ReplicationPacketFixture): ReturnType<ReplicationRecords['storeReplicationPacket']>;
  /** Writes `fixture` as an archive, giving its path. */
  archive(fixture: ReplicationPacketFixture): Promise<string>;
  replication(): ReplicationRecords;
  rowsOf(packet: number): Promise<RowChange[]>;
  count(table: string): Promise<number>;
  removals(): Promise<Record<string, unknown>[]>;
  events(): Promise<Record<string, string>[]>;
}

/** Registers a fresh database of `stores` per test (beforeEach / afterEach) and gives its readers. */
export function replicationFixture(stores: StoreKind): ReplicationFixture {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let folder = 0;
  beforeEach(async () => {
    dir = await tempDir('livefeed-replication-');
    db = await stores.create(dir.dir);
  });
  afterEach(async () => {
    await db.close();
    await dir.cleanup();
  });
  const replication = () => db.store.replication;
  const archive = (fixture: ReplicationPacketFixture) =>
    writeReplicationPacket(join(dir.dir, `feed-${++folder}`), fixture);
  return {
    db: () => db,
    archive,
    replication,
    store: async (fixture) =>
      replication().storeReplicationPacket(fixture.packet, await archive(fixture), { now: () => NOW }),
    rowsOf: async (packet) =>
      (
        await db.rows<RowChange>(
          `SELECT seqid, xid, table_name AS "table", op, keys, old_data AS "oldData", new_data AS "newData", timestamp
           FROM row_changes WHERE packet = ? ORDER BY ord`,
          packet,
        )
      ).map((row) => ({
        ...row,
        keys: json(row.keys),
        oldData: json(row.oldData),
        newData: json(row.newData),
      })),
    count: async (table) => (await db.rows<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n,
    removals: () =>
      db.rows(
        'SELECT packet, mbid, entity, kind, merged_into AS "mergedInto" FROM removals ORDER BY packet, kind, mbid',
      ),
    events: () => db.rows<Record<string, string>>('SELECT packet, kind, message, at FROM events ORDER BY id'),
  };
}

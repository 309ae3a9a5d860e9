import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, openStore, type Store } from '../../src/db/client.js';
import { latestPacketNumber } from '../../src/db/latestPacket.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { FILE_RECORD_SQL } from '../../src/sync/fileRecords.js';
import { syncOnce } from '../../src/sync/worker.js';
import { pgTimestamp, writeJsonDump } from '../support/archives.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import { writeReplicationPacket } from '../support/replicationArchives.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

/**
 * Issue 16: the newest complete packet is a mark the writer keeps in the transaction that completes
 * or reopens a packet; every answer is compared with the definition computed from all packets,
 * on both stores (issue 17).
 */

const ARTIST = (id: string, name: string) => JSON.stringify({ id, name, 'sort-name': name, type: 'Person' });
const AREA = (id: string, name: string) => JSON.stringify({ id, name, type: 'City' });
const A1 = '00000000-0000-4000-8000-000000000001';
const A2 = '00000000-0000-4000-8000-000000000002';

type PacketRows = { number: number; syncedAt: string | null }[];
const PACKETS_SQL = 'SELECT number, synced_at AS "syncedAt" FROM packets ORDER BY number';
const MARK_SQL = "SELECT value FROM meta WHERE key = 'latest_packet'";

/** The definition, from every packet: the packet before the first gap (incomplete or missing). */
function definedBy(rows: PacketRows): number | undefined {
  let latest: number | undefined;
  for (const [i, row] of rows.entries()) {
    if (row.syncedAt === null || (i > 0 && row.number !== rows[i - 1]!.number + 1)) break;
    latest = row.number;
  }
  return latest;
}

function byDefinition(store: Store): number | undefined {
  return definedBy(store.sqlite.prepare(PACKETS_SQL).all() as PacketRows);
}

function markOf(value: string | undefined): { from: number; number: number | null } | undefined {
  return value === undefined ? undefined : JSON.parse(value);
}

function markRow(store: Store): unknown {
  return markOf(store.sqlite.prepare(MARK_SQL).pluck().get() as string | undefined);
}

describeStores('the latest-packet mark across settling and late JSON dumps', (stores) => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase;
  let ctx: SyncContext;
  const clock = new Date('2026-11-22T12:00:00Z');

  beforeEach(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    feed = await startSampleFeed({ root: feedDir.dir });
    db = await stores.create(dataDir.dir);
    ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      now: () => clock,
    });
  });
  afterEach(async () => {
    await ctx?.feed.client.close();
    await db?.close();
    await feed?.close();
    await feedDir?.cleanup();
    await dataDir?.cleanup();
  });

  const mark = async () => markOf((await db.rows<{ value: string }>(MARK_SQL))[0]?.value);
  /**
   * The definition over every packet and `latestPacket` of the store's reads agree (a mark whose
   * `from` is no longer the first packet is walked again by the read); on SQLite its mark read too.
   */
  const expectMark = async (expected: number | undefined) => {
    if (db.store.kind === 'sqlite') expect(latestPacketNumber(db.store as unknown as Store)).toBe(expected);
    expect(definedBy(await db.rows<PacketRows[number]>(PACKETS_SQL))).toBe(expected);
    expect((await db.reads.latestPacket())?.number).toBe(expected);
  };
  /** The writer completes packet `n` (its artist and area dumps stored, nothing settled by time). */
  const completePacket = (n: number) =>
    db.store.completePackets({ from: n, to: n }, ['area', 'artist'], () => false, clock.toISOString());
  it('moves with completion, a late dump, a later packet settling an earlier one, and a reopened packet', async () => {
    const fresh = pgTimestamp(new Date(clock.getTime() - 40 * 60_000));
    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: fresh,
    });
    await syncOnce(ctx, { from: 10 });
    await expectMark(undefined); // 10's area dump is PENDING: nothing complete yet
    expect(await mark()).toEqual({ from: 10, number: null });

    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'area',
      lines: [AREA(A2, 'Town')],
      timestamp: fresh,
    });
    // Upstream holds hour 11 (its replication packet): its area's 404 can settle as no changes.
    await writeReplicationPacket(feedDir.dir, { packet: 11, format: 'v2', rows: [] });
    await writeJsonDump(feedDir.dir, {
      packet: 11,
      entity: 'artist',
      lines: [ARTIST(A1, 'Two')],
      timestamp: fresh,
    });
    await syncOnce(ctx);
    await expectMark(10); // the late dump completed 10; 11 waits for its area dump
    expect(await mark()).toEqual({ from: 10, number: 10 });

    await writeJsonDump(feedDir.dir, {
      packet: 12,
      entity: 'area',
      lines: [AREA(A2, 'Again')],
      timestamp: fresh,
    });
    await syncOnce(ctx);
    await expectMark(11); // 12's dump settled 11's area as NO_CHANGES; 12 waits for its artist dump

    await writeJsonDump(feedDir.dir, {
      packet: 12,
      entity: 'artist',
      lines: [ARTIST(A1, 'Three')],
      timestamp: fresh,
    });
    await syncOnce(ctx);
    await expectMark(12);

    // A packet that turns incomplete again moves the mark back before it, in its transaction.
    await db.store.reopenPacket(11);
    await expectMark(10);
    await completePacket(11);
    await expectMark(12);
  });

  it('a packet stored below the first one is counted from the new first packet', async () => {
    const fresh = pgTimestamp(new Date(clock.getTime() - 40 * 60_000));
    for (const entity of ['artist', 'area'] as const)
      await writeJsonDump(feedDir.dir, { packet: 20, entity, lines: [ARTIST(A1, 'One')], timestamp: fresh });
    await writeJsonDump(feedDir.dir, {
      packet: 21,
      entity: 'area',
      lines: [AREA(A2, 'x')],
      timestamp: fresh,
    });
    await syncOnce(ctx, { from: 20 });
    await expectMark(20);
    // A sync --from further back stores packet 18 first, not yet complete: nothing is complete
    // from the first packet on, until the writer completes 18 and 19 (the gap) is still missing.
    await db.rows(FILE_RECORD_SQL.ensurePacket, 18, clock.toISOString());
    await expectMark(undefined);
    await db.rows('UPDATE packets SET synced_at = ? WHERE number = 18', clock.toISOString());
    await completePacket(18);
    await expectMark(18);
    expect(await mark()).toEqual({ from: 18, number: 18 });
  });
});

// SQLite only: its migration 0007 added the mark to databases made before it; PostgreSQL's schema
// has held the mark from its first migration.
describe('the migration fills the mark for a database made by an earlier version', () => {
  it('computes the packet before the first gap from the stored packets', async () => {
    const dir = await tempDir('lf-mark-');
    const store = openStore(join(dir.dir, 'livefeed.db'));
    try {
      const fill = readFileSync(join(MIGRATIONS_FOLDER, '0007_read_cost.sql'), 'utf8')
        .split('--> statement-breakpoint')
        .find((statement) => statement.includes("'latest_packet'"))!;
      const at = '2026-11-22T12:00:00Z';
      const insert = store.sqlite.prepare(
        'INSERT INTO packets (number, synced_at, created_at) VALUES (?, ?, ?)',
      );
      const cases: [
        rows: [number, boolean][],
        expected: { from: number; number: number | null } | undefined,
      ][] = [
        [[], undefined],
        [
          [
            [5, false],
            [6, true],
          ],
          { from: 5, number: null },
        ],
        [
          [
            [5, true],
            [6, true],
            [7, false],
            [8, true],
          ],
          { from: 5, number: 6 },
        ],
        [
          [
            [5, true],
            [6, true],
            [8, true],
          ],
          { from: 5, number: 6 },
        ],
        [
          [
            [5, true],
            [6, true],
            [7, true],
          ],
          { from: 5, number: 7 },
        ],
      ];
      for (const [rows, expected] of cases) {
        store.sqlite.exec("DELETE FROM packets; DELETE FROM meta WHERE key = 'latest_packet'");
        for (const [number, done] of rows) insert.run(number, done ? at : null, at);
        store.sqlite.exec(fill);
        expect(markRow(store)).toEqual(expected);
        expect(latestPacketNumber(store)).toBe(byDefinition(store));
      }
    } finally {
      store.close();
      await dir.cleanup();
    }
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, openStore, type Store } from '../../src/db/client.js';
import { latestPacket, latestPacketNumber } from '../../src/db/latestPacket.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { ensurePacket } from '../../src/sync/fileRecords.js';
import { completePackets, reopenPacket } from '../../src/sync/state.js';
import { syncOnce } from '../../src/sync/worker.js';
import { writeJsonDump } from '../support/archives.js';
import { syncContext, tempDir } from '../support/harness.js';

/**
 * Issue 16: the newest complete packet is a mark the writer keeps in the transaction that completes
 * or reopens a packet; every answer is compared with the definition computed from all packets.
 */

const ARTIST = (id: string, name: string) => JSON.stringify({ id, name, 'sort-name': name, type: 'Person' });
const AREA = (id: string, name: string) => JSON.stringify({ id, name, type: 'City' });
const A1 = '00000000-0000-4000-8000-000000000001';
const A2 = '00000000-0000-4000-8000-000000000002';

function pgText(date: Date): string {
  return `${date.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

/** The definition, from every packet: the packet before the first gap (incomplete or missing). */
function byDefinition(store: Store): number | undefined {
  const rows = store.sqlite
    .prepare('SELECT number, synced_at AS syncedAt FROM packets ORDER BY number')
    .all() as {
    number: number;
    syncedAt: string | null;
  }[];
  let latest: number | undefined;
  for (const [i, row] of rows.entries()) {
    if (row.syncedAt === null || (i > 0 && row.number !== rows[i - 1]!.number + 1)) break;
    latest = row.number;
  }
  return latest;
}

function markRow(store: Store): unknown {
  const value = store.sqlite.prepare("SELECT value FROM meta WHERE key = 'latest_packet'").pluck().get();
  return value === undefined ? undefined : JSON.parse(value as string);
}

describe('the latest-packet mark across settling and late JSON dumps', () => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let ctx: Awaited<ReturnType<typeof syncContext>>;
  const clock = new Date('2026-11-22T12:00:00Z');

  beforeEach(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    feed = await startSampleFeed({ root: feedDir.dir });
    ctx = await syncContext({
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      now: () => clock,
    });
  });
  afterEach(async () => {
    ctx.store.close();
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  const expectMark = (expected: number | undefined) => {
    expect(latestPacketNumber(ctx.store)).toBe(expected);
    expect(byDefinition(ctx.store)).toBe(expected);
    expect(latestPacket(ctx.store)?.number).toBe(expected);
  };

  it('moves with completion, a late dump, a later packet settling an earlier one, and a reopened packet', async () => {
    const fresh = pgText(new Date(clock.getTime() - 40 * 60_000));
    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: fresh,
    });
    await syncOnce(ctx, { from: 10 });
    expectMark(undefined); // 10's area dump is PENDING: nothing complete yet
    expect(markRow(ctx.store)).toEqual({ from: 10, number: null });

    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'area',
      lines: [AREA(A2, 'Town')],
      timestamp: fresh,
    });
    await writeJsonDump(feedDir.dir, {
      packet: 11,
      entity: 'artist',
      lines: [ARTIST(A1, 'Two')],
      timestamp: fresh,
    });
    await syncOnce(ctx);
    expectMark(10); // the late dump completed 10; 11 waits for its area dump
    expect(markRow(ctx.store)).toEqual({ from: 10, number: 10 });

    await writeJsonDump(feedDir.dir, {
      packet: 12,
      entity: 'area',
      lines: [AREA(A2, 'Again')],
      timestamp: fresh,
    });
    await syncOnce(ctx);
    expectMark(11); // 12's dump settled 11's area as NO_CHANGES; 12 waits for its artist dump

    await writeJsonDump(feedDir.dir, {
      packet: 12,
      entity: 'artist',
      lines: [ARTIST(A1, 'Three')],
      timestamp: fresh,
    });
    await syncOnce(ctx);
    expectMark(12);

    // A packet that turns incomplete again moves the mark back before it, in its transaction.
    reopenPacket(ctx.store, 11);
    expectMark(10);
    completePackets(ctx.store, { from: 11, to: 11 }, ['area', 'artist'], () => false, clock.toISOString());
    expectMark(12);
  });

  it('a packet stored below the first one is counted from the new first packet', async () => {
    const fresh = pgText(new Date(clock.getTime() - 40 * 60_000));
    for (const entity of ['artist', 'area'] as const)
      await writeJsonDump(feedDir.dir, { packet: 20, entity, lines: [ARTIST(A1, 'One')], timestamp: fresh });
    await writeJsonDump(feedDir.dir, {
      packet: 21,
      entity: 'area',
      lines: [AREA(A2, 'x')],
      timestamp: fresh,
    });
    await syncOnce(ctx, { from: 20 });
    expectMark(20);
    // A sync --from further back stores packet 18 first, not yet complete: nothing is complete
    // from the first packet on, until the writer completes 18 and 19 (the gap) is still missing.
    ensurePacket(ctx.store, 18, clock.toISOString());
    expectMark(undefined);
    ctx.store.sqlite.prepare('UPDATE packets SET synced_at = ? WHERE number = 18').run(clock.toISOString());
    completePackets(ctx.store, { from: 18, to: 18 }, ['area', 'artist'], () => false, clock.toISOString());
    expectMark(18);
    expect(markRow(ctx.store)).toEqual({ from: 18, number: 18 });
  });
});

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

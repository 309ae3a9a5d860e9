import { expect, it } from 'vitest';
import { type CurrentRow, currentCounts, HELD_MBIDS_SQL } from '../../src/db/currentQueries.js';
import { RECORD_HISTORY_FROM_SQL, recordHistoryFrom } from '../../src/db/historyQueries.js';
import { changeId } from '../../src/db/keys.js';
import { currentCountsPostgres } from '../../src/db/postgres/currentReads.js';
import { pgRows } from '../../src/db/postgres/sql.js';
import type { ChangeRow } from '../../src/db/queries.js';
import { type Awaitable, type Reads, sqliteReads } from '../../src/db/reads.js';
import { artistLine, MBID } from '../support/currentStateFeed.js';
import { describeReadStores, filledWith } from '../support/readStores.js';
import { FILLER_0, fillReadsStory, LABEL_LINES, label, SAME_PACKET_LINE } from '../support/readsFeed.js';

// Both stores filled from the same real archives (test/support/readsFeed.ts) answer the same.

/** A change as plain data (SQLite's lazily read line included), for deep comparison. */
const plainChange = (c: ChangeRow) => ({
  id: c.id,
  packet: c.packet,
  entity: c.entity,
  position: c.position,
  mbid: c.mbid,
  data: Buffer.from(c.data),
});
const plainRow = (row: CurrentRow | undefined) =>
  row && { ...row, latest: row.latest && plainChange(row.latest) };
const text = (c: ChangeRow | undefined) => c?.data.toString('utf8');

describeReadStores('current state and history reads', (kind, store) => {
  const twin = filledWith(store, fillReadsStory);
  const reads = (): Reads => store().reads;

  it('a current MBID: its newest JSON dump line, byte for byte', async () => {
    const row = await reads().currentOfMbid(MBID.replaced);
    expect(plainRow(row)).toEqual({
      mbid: MBID.replaced,
      entity: 'artist',
      status: 'CURRENT',
      packet: 11,
      mergedInto: null,
      latest: {
        id: changeId(11, 'artist', 1),
        packet: 11,
        entity: 'artist',
        position: 1,
        mbid: MBID.replaced,
        data: Buffer.from(artistLine(MBID.replaced, 'second')),
      },
    });
  });

  it('an MBID neither a JSON dump nor a removal holds is undefined, also a merge target no dump held', async () => {
    expect(await reads().currentOfMbid(MBID.unknown)).toBeUndefined();
    expect(await reads().currentOfMbid(MBID.notInDumps)).toBeUndefined();
  });

  it('a deleted MBID keeps its newest line, also one of an older packet stored after the deletion', async () => {
    const row = await reads().currentOfMbid(MBID.deletedDespiteOlderDump);
    expect(row).toMatchObject({ status: 'DELETED', packet: 12, entity: 'artist', mergedInto: null });
    expect(row!.latest!.id).toBe(changeId(11, 'artist', 2));
    expect(text(row!.latest!)).toBe(artistLine(MBID.deletedDespiteOlderDump, 'second'));
  });

  it('a merged MBID names its target, and a merge chain leads to the current entity', async () => {
    expect(await reads().currentOfMbid(MBID.chainStart)).toMatchObject({
      status: 'MERGED',
      packet: 12,
      mergedInto: MBID.middle,
    });
    const chain: string[] = [];
    let row = await reads().currentOfMbid(MBID.chainStart);
    while (row?.status === 'MERGED') {
      chain.push(row.mbid);
      row = await reads().currentOfMbid(row.mergedInto!);
    }
    expect([...chain, row?.mbid]).toEqual([MBID.chainStart, MBID.middle, MBID.chainEnd]);
    expect(row).toMatchObject({ status: 'CURRENT', packet: 10 });
    expect(await reads().currentOfMbid(MBID.mergedIntoUnheld)).toMatchObject({
      status: 'MERGED',
      packet: 13,
      mergedInto: MBID.notInDumps,
    });
  });

  it('a JSON dump line of a later packet than the removal makes the MBID current again', async () => {
    const row = await reads().currentOfMbid(MBID.reappeared);
    expect(row).toMatchObject({ status: 'CURRENT', packet: 14, mergedInto: null });
    expect(text(row!.latest!)).toBe(artistLine(MBID.reappeared, 'back'));
  });

  it('a removal wins over a JSON dump line of the same packet, which stays its newest line', async () => {
    const row = await reads().currentOfMbid(MBID.deletedTarget);
    expect(row).toMatchObject({ status: 'DELETED', packet: 13, entity: 'artist' });
    expect(row!.latest!.id).toBe(changeId(13, 'artist', 1));
    expect(row!.latest!.data).toEqual(Buffer.from(SAME_PACKET_LINE));
  });

  it('of a deletion and a merge in one packet, the merge wins and names its target', async () => {
    const row = await reads().currentOfMbid(FILLER_0);
    expect(row).toMatchObject({ status: 'MERGED', packet: 16, entity: 'artist', mergedInto: MBID.chainEnd });
    expect(row!.latest!.id).toBe(changeId(10, 'artist', 10));
  });

  it('a list of MBIDs answers in the order asked, duplicates and unknowns included, as one MBID at a time', async () => {
    const asked = [MBID.middle, MBID.unknown, MBID.replaced, MBID.middle, MBID.reappeared, label(7)];
    const many = await reads().currentOfMbids(asked);
    expect(many.map((row) => row?.status)).toEqual([
      'MERGED',
      undefined,
      'CURRENT',
      'MERGED',
      'CURRENT',
      'CURRENT',
    ]);
    const one = await Promise.all(asked.map((mbid) => reads().currentOfMbid(mbid)));
    expect(many.map(plainRow)).toEqual(one.map(plainRow));
    const statusesOnly = await reads().currentOfMbids(asked, { data: false });
    expect(statusesOnly.map(plainRow)).toEqual(one.map(plainRow));
    expect(await reads().currentOfMbids([])).toEqual([]);
  });

  it("an MBID's history comes a page at a time, oldest first, with its count", async () => {
    const all = await reads().changesOfMbidPage(MBID.replaced, 0, 500);
    expect(all.map((c) => c.id)).toEqual([changeId(10, 'artist', 1), changeId(11, 'artist', 1)]);
    expect(all.map(text)).toEqual([artistLine(MBID.replaced, 'first'), artistLine(MBID.replaced, 'second')]);
    const first = await reads().changesOfMbidPage(MBID.replaced, 0, 1);
    const second = await reads().changesOfMbidPage(MBID.replaced, first[0]!.id, 1);
    expect([...first, ...second].map(plainChange)).toEqual(all.map(plainChange));
    expect(await reads().changesOfMbidPage(MBID.replaced, second[0]!.id, 1)).toEqual([]);
    expect(await reads().changesOfMbidPage(MBID.unknown, 0, 20)).toEqual([]);
    expect(await reads().changeCountOfMbid(MBID.replaced)).toBe(2);
    expect(await reads().changeCountOfMbid(MBID.deletedTarget)).toBe(2);
    expect(await reads().changeCountOfMbid(MBID.unknown)).toBe(0);
  });

  it('the previous version of a change is the newest older one of its MBID; the oldest has none', async () => {
    const latest = (await reads().currentOfMbid(MBID.deletedTarget))!.latest!;
    const previous = await reads().previousChange(latest);
    expect(previous).toMatchObject({ id: changeId(10, 'artist', 7), packet: 10, position: 7 });
    expect(text(previous)).toBe(artistLine(MBID.deletedTarget, 'first'));
    expect(await reads().previousChange(previous!)).toBeUndefined();
    expect(
      await reads().previousChange({ id: changeId(20, 'artist', 1), mbid: MBID.unknown }),
    ).toBeUndefined();
  });

  it("a packet's TIMESTAMP is the stored text; null for a packet not held", async () => {
    expect(await reads().packetTimestamp(15)).toMatch(/^2026-05-12T08:30:00\.250001/);
    expect(await reads().packetTimestamp(10)).toMatch(/^2026-05-11T21:14:26\.878674/);
    expect(await reads().packetTimestamp(99)).toBeNull();
  });

  it("a JSON dump's changes come a page at a time in file order, byte for byte; past the end, empty", async () => {
    const pages = [
      await reads().changesPage(15, 'label', 0, 50),
      await reads().changesPage(15, 'label', 50, 50),
      await reads().changesPage(15, 'label', 100, 50),
    ];
    expect(pages.map((p) => p.length)).toEqual([50, 50, 20]);
    const rows = pages.flat();
    expect(rows.map((c) => c.position)).toEqual(LABEL_LINES.map((_, i) => i + 1));
    expect(rows.map((c) => c.data)).toEqual(LABEL_LINES.map((line) => Buffer.from(line)));
    expect(rows[6]).toMatchObject({
      id: changeId(15, 'label', 7),
      packet: 15,
      entity: 'label',
      mbid: label(7),
    });
    expect(await reads().changesPage(15, 'label', 120, 50)).toEqual([]);
    expect(await reads().changesPage(15, 'artist', 0, 50)).toEqual([]);
    // The artist dump of the same packet range is a range of its own.
    expect((await reads().changesPage(13, 'artist', 0, 50)).map(text)).toEqual([SAME_PACKET_LINE]);
    await expect(async () => reads().changesPage(15, 'label', 0, -1)).rejects.toThrow(RangeError);
  });

  if (kind === 'postgres') {
    it('answers every read as the SQLite store of the same archives does, byte for byte', async () => {
      const reference = sqliteReads(twin());
      const mbids = twin()
        .sqlite.prepare('SELECT mbid FROM changes UNION SELECT mbid FROM removals ORDER BY mbid')
        .pluck()
        .all() as string[];
      const asked = [...mbids, MBID.unknown, ...mbids.slice(0, 5)];
      const both = async <T>(read: (r: Reads) => Awaitable<T>) => {
        const [pg, sqlite] = await Promise.all([read(reads()), read(reference)]);
        expect(pg).toEqual(sqlite);
        return sqlite;
      };
      const plainRows = (rows: (CurrentRow | undefined)[]) => rows.map(plainRow);
      await both(async (r) => plainRows(await r.currentOfMbids(asked)));
      await both(async (r) => plainRows(await r.currentOfMbids(asked, { data: false })));
      for (const mbid of mbids) {
        const history = await both((r) => r.changesOfMbidPage(mbid, 0, 500));
        await both((r) => r.changeCountOfMbid(mbid));
        for (const change of history) await both((r) => r.previousChange(change));
      }
      for (const [packet, entity] of [
        [10, 'artist'],
        [11, 'artist'],
        [13, 'artist'],
        [14, 'artist'],
        [15, 'label'],
      ] as const) {
        for (let after = 0; after <= 160; after += 7)
          await both((r) => r.changesPage(packet, entity, after, 7));
      }
      for (let packet = 9; packet <= 16; packet++) await both((r) => r.packetTimestamp(packet));
      await both((r) => r.historyFrom());
      await both((r) => r.prunedBefore());
    });
  }

  it('counts the current state per status (reports, tests): each MBID as currentOfMbids reads it, as on SQLite', async () => {
    const { sqlite, postgres } = store();
    const held = sqlite
      ? (sqlite.sqlite.prepare(HELD_MBIDS_SQL).pluck().all() as string[])
      : (await postgres!.pool.query<{ mbid: string }>(HELD_MBIDS_SQL)).rows.map((r) => r.mbid);
    const expected = { CURRENT: 0, DELETED: 0, MERGED: 0 };
    for (const row of await reads().currentOfMbids(held)) if (row) expected[row.status]++;
    expect(Object.values(expected).every((n) => n > 0)).toBe(true);
    expect(currentCounts(twin())).toEqual(expected);
    if (postgres) {
      expect(await currentCountsPostgres(postgres.pool)).toEqual(expected);
      // Several cursor batches, the last one short.
      expect(await currentCountsPostgres(postgres.pool, 7)).toEqual(expected);
    }
  });

  it('history starts at the oldest packet held, then at the pruning cutoff once one is recorded', async () => {
    expect(await reads().historyFrom()).toBe(10);
    expect(await reads().prunedBefore()).toBeUndefined();
    const { sqlite, postgres } = store();
    // The cutoff as both pruning writers record it (the prunes themselves: test/sync/prune.test.ts,
    // and through GraphQL test/graphql/types/changeFeedPruned.test.ts).
    if (sqlite) recordHistoryFrom(sqlite, 11);
    else await pgRows(postgres!.pool, RECORD_HISTORY_FROM_SQL, ['11']);
    expect(await reads().prunedBefore()).toBe(11);
    expect(await reads().historyFrom()).toBe(11);
  });
});

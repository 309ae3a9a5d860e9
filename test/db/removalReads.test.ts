import { expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import { MAX_PACKET } from '../../src/db/keys.js';
import { pgSql } from '../../src/db/postgres/sql.js';
import { type Awaitable, type Reads, sqliteReads, thenAwaitable } from '../../src/db/reads.js';
import type { RemovalKey, RemovalRow } from '../../src/db/replicationQueries.js';
import { MBID } from '../support/currentStateFeed.js';
import { describeReadStores, filledWith } from '../support/readStores.js';
import { FILLER_0, fillReadsStory } from '../support/readsFeed.js';

// The removal, JSON dump state and snapshot reads of Reads (db/reads.ts) on both stores, filled
// from the same real archives by each store's sync writer (test/support/readsFeed.ts).

const ALL = { from: 1, to: MAX_PACKET };
const keyOf = (row: RemovalRow): RemovalKey => ({ packet: row.packet, mbid: row.mbid, kind: row.kind });
const label = (row: RemovalRow) => `${row.packet} ${row.kind} ${row.mbid}`;

describeReadStores('removal, JSON dump state and snapshot reads', (kind, store) => {
  const twin = filledWith(store, fillReadsStory);
  const reads = (): Reads => store().reads;

  it("an MBID's newest removal, with its replication packet's TIMESTAMP; of a deletion and a merge in one packet, the merge", async () => {
    expect(await reads().removalOfMbid(MBID.chainStart)).toEqual({
      mbid: MBID.chainStart,
      entity: 'artist',
      packet: 12,
      kind: 'MERGED',
      mergedInto: MBID.middle,
      timestamp: expect.stringMatching(/^2026-/),
    });
    expect(await reads().removalOfMbid(FILLER_0)).toMatchObject({
      packet: 16,
      kind: 'MERGED',
      mergedInto: MBID.chainEnd,
      timestamp: null,
    });
    expect(await reads().removalOfMbid(MBID.replaced)).toBeUndefined();
  });

  it('removals come a page at a time by packet, MBID, kind, within a range and an entity type, with counts', async () => {
    const all = await reads().removalsPage(ALL, undefined, 500);
    expect(all.map(label)).toEqual([
      `12 DELETED ${MBID.reappeared}`,
      `12 MERGED ${MBID.chainStart}`,
      `12 MERGED ${MBID.mergedThenDeleted}`,
      `12 DELETED ${MBID.deletedDespiteOlderDump}`,
      `13 MERGED ${MBID.middle}`,
      `13 DELETED ${MBID.deletedTarget}`,
      `13 MERGED ${MBID.mergedIntoUnheld}`,
      `15 DELETED ${FILLER_0}`,
      `16 DELETED ${FILLER_0}`,
      `16 MERGED ${FILLER_0}`,
    ]);
    const paged: RemovalRow[] = [];
    for (let page = await reads().removalsPage(ALL, undefined, 3); page.length > 0; ) {
      paged.push(...page);
      page = await reads().removalsPage(ALL, keyOf(page.at(-1)!), 3);
    }
    expect(paged).toEqual(all);
    expect(await reads().removalCount(ALL)).toBe(10);
    const thirteen = { from: 13, to: 15 };
    expect((await reads().removalsPage(thirteen, undefined, 500)).map(label)).toEqual(
      all.slice(4, 8).map(label),
    );
    expect(await reads().removalCount(thirteen)).toBe(4);
    expect(await reads().removalsPage({ ...ALL, entity: 'label' }, undefined, 500)).toEqual([]);
    expect(await reads().removalCount({ ...ALL, entity: 'artist' })).toBe(10);
    await expect(async () => reads().removalsPage(ALL, undefined, -1)).rejects.toThrow(RangeError);
  });

  it("a JSON dump's state: its status and count; a row of nulls without a dumps row; undefined for a packet not synced", async () => {
    expect(await reads().jsonDumpState(15, 'label')).toEqual({
      status: 'SYNCED',
      error: null,
      changeCount: 120,
    });
    expect(await reads().jsonDumpState(15, 'area')).toEqual({ status: null, error: null, changeCount: null });
    expect(await reads().jsonDumpState(99, 'label')).toBeUndefined();
  });

  if (kind === 'postgres') {
    it('answers every read as the SQLite store of the same archives does', async () => {
      const reference = sqliteReads(twin());
      const both = async <T>(read: (r: Reads) => Awaitable<T>) => {
        const [pg, sqlite] = await Promise.all([read(reads()), read(reference)]);
        expect(pg).toEqual(sqlite);
      };
      const mbids = twin().sqlite.prepare('SELECT DISTINCT mbid FROM removals').pluck().all() as string[];
      for (const mbid of [...mbids, MBID.unknown]) await both((r) => r.removalOfMbid(mbid));
      for (const range of [ALL, { from: 12, to: 12 }, { from: 13, to: 16, entity: 'artist' as const }]) {
        await both((r) => r.removalsPage(range, undefined, 500));
        await both((r) => r.removalsPage(range, { packet: 12, mbid: MBID.chainStart, kind: 'MERGED' }, 2));
        await both((r) => r.removalCount(range));
      }
      for (let packet = 9; packet <= 16; packet++) {
        for (const entity of ['artist', 'label', 'area'] as const)
          await both((r) => r.jsonDumpState(packet, entity));
      }
    });
  }

  // Last: it commits a removal of its own.
  it('a snapshot sees one state of the database: a removal committed between two of its reads is not seen', async () => {
    const insert = "INSERT INTO removals (mbid, entity, packet, kind) VALUES (?, 'artist', 17, 'DELETED')";
    // Another connection commits while the snapshot is open: at once on SQLite, whose snapshot
    // read must answer at once, awaited on PostgreSQL.
    const commitElsewhere = (): Awaitable<void> => {
      const { sqlite, postgres } = store();
      if (postgres) return postgres.pool.query(pgSql(insert), [MBID.replaced]).then(() => undefined);
      const other = openStore(sqlite!.path);
      other.sqlite.prepare(insert).run(MBID.replaced);
      other.close();
    };
    const seen = await reads().snapshot((current) =>
      thenAwaitable(current.currentOfMbid(MBID.replaced), (before) =>
        thenAwaitable(commitElsewhere(), () =>
          thenAwaitable(current.currentOfMbid(MBID.replaced), (after) => [before, after]),
        ),
      ),
    );
    expect(seen.map((row) => row?.status)).toEqual(['CURRENT', 'CURRENT']);
    expect(await reads().currentOfMbid(MBID.replaced)).toMatchObject({ status: 'DELETED', packet: 17 });
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FeedEvent, FeedPage, FeedQuery } from '../../src/db/changeFeedQueries.js';
import type { Store } from '../../src/db/client.js';
import { HistoryPrunedError } from '../../src/db/feedWindow.js';
import { RECORD_HISTORY_FROM_SQL, recordHistoryFrom } from '../../src/db/historyQueries.js';
import { pgRows } from '../../src/db/postgres/sql.js';
import { type Reads, sqliteReads } from '../../src/db/reads.js';
import type { RowChangeRow } from '../../src/db/replicationQueries.js';
import { fillBundledFeed } from '../support/feedStores.js';
import { GrowingFeed } from '../support/growingFeed.js';
import { describeReadStores } from '../support/readStores.js';

// The bundled feed synced with replication packets through each store's real writer: the reads of
// stored replication packets and of the change stream answer the same on both stores.

const expected = new GrowingFeed('/nonexistent');
const { manifest } = expected;
const iso = (timestamp: string) => timestamp.replace(' ', 'T').replace(/\+00$/, 'Z');

/** An event as `<packet> change|DELETED|MERGED <mbid>`, as GrowingFeed.expectedEvents writes it. */
const label = (e: FeedEvent) => `${e.packet} ${'kind' in e ? e.kind : 'change'} ${e.mbid}`;

/** A row change with its JSON columns parsed (SQLite keeps upstream's text, PostgreSQL jsonb's). */
const parsedRow = ({ keys, oldData, newData, ...row }: RowChangeRow) => ({
  ...row,
  keys: keys === null ? null : JSON.parse(keys),
  oldData: oldData === null ? null : JSON.parse(oldData),
  newData: newData === null ? null : JSON.parse(newData),
});

/** A page as plain data (SQLite's lines are views of one buffer). */
const plainPage = (page: FeedPage) => ({
  ...page,
  events: page.events.map((e) => ('data' in e ? { ...e, data: Buffer.from(e.data) } : e)),
});

describeReadStores('replication packet and change stream reads', (kind, store) => {
  let twin: Store;
  const reads = (): Reads => store().reads;
  /** The newest packet the stream serves. */
  let frontier: number;
  beforeAll(async () => {
    twin = await fillBundledFeed(store());
    // `first: 0` reads no event, says that some wait, and stays at the start of the history held.
    const zero = await reads().readFeedEvents({ first: 0 });
    const whole = await reads().readFeedEvents({ first: 500 });
    expect(zero).toMatchObject({
      events: [],
      hasMore: true,
      next: { at: 'packetEnd', packet: manifest.packets[0]!.number - 1 },
    });
    expect(whole.next?.at).toBe('packetEnd');
    frontier = (whole.next as { packet: number }).packet;
  }, 180_000);
  afterAll(() => {
    if (twin !== store().sqlite) twin?.close();
  });

  it('each replication packet is SYNCED with its counts per table; a packet never tried has none', async () => {
    for (const packet of manifest.packets) {
      const replication = packet.replication!;
      const row = await reads().replicationPacketRow(packet.number);
      expect(row).toMatchObject({
        packet: packet.number,
        status: 'SYNCED',
        format: 'V2',
        schemaSequence: manifest.schemaSequence,
        dbmirrorVersion: 2,
        rowCount: replication.rowCount,
        fileName: replication.file,
        error: null,
      });
      expect(row!.timestamp).toMatch(/^2026-05-1[01][ T]/);
      expect(await reads().storedReplicationPacket(packet.number)).toEqual(row);
      expect(await reads().tableChangesOf(packet.number)).toEqual(replication.tables);
    }
    expect(await reads().replicationPacketRow(manifest.firstPacket - 1)).toBeUndefined();
    expect(await reads().storedReplicationPacket(manifest.firstPacket - 1)).toBeUndefined();
    expect(await reads().tableChangesOf(manifest.firstPacket - 1)).toEqual([]);
  });

  it("row changes come in apply order with upstream's values, a page at a time, filtered and counted", async () => {
    for (const packet of manifest.packets) {
      const rows = manifest.packets.find((p) => p.number === packet.number)!.replication!.rows;
      const all = await reads().rowChangesPage(packet.number, {}, -1, 500);
      expect(all.map(({ ord }) => ord)).toEqual(rows.map((_, i) => i));
      expect(all.map(({ ord: _, ...row }) => parsedRow(row as RowChangeRow))).toEqual(
        rows.map((row) => ({ packet: packet.number, ...row })),
      );
      const paged: RowChangeRow[] = [];
      for (let after = -1; ; ) {
        const page = await reads().rowChangesPage(packet.number, {}, after, 1);
        if (page.length === 0) break;
        paged.push(...page);
        after = page[0]!.ord;
      }
      expect(paged).toEqual(all);
      expect(await reads().rowChangeCount(packet.number, {})).toBe(rows.length);
      for (const table of new Set(rows.map((r) => r.table))) {
        for (const op of ['i', 'u', 'd'] as const) {
          const want = all.filter((r) => r.table === table && r.op === op);
          expect(await reads().rowChangesPage(packet.number, { table, op }, -1, 500)).toEqual(want);
          expect(await reads().rowChangeCount(packet.number, { table, op })).toBe(want.length);
        }
      }
    }
    await expect(async () => reads().rowChangesPage(manifest.firstPacket, {}, -1, -1)).rejects.toThrow(
      RangeError,
    );
  });

  it('the change stream holds every change and removal once, in stream order, page by page with counts', async () => {
    const whole = await reads().readFeedEvents({ first: 500 });
    expect(frontier).toBeGreaterThanOrEqual(186122);
    expect(whole.events.map(label)).toEqual(expected.expectedEvents(manifest.firstPacket, frontier));
    const removal = manifest.packets[22]!.replication!.removals[0]!;
    expect(whole.events.map(label)).toContain(`186122 ${removal.kind} ${removal.mbid}`);
    expect(await reads().countFeedEvents({})).toBe(whole.events.length);
    const events: FeedEvent[] = [];
    let after: FeedPage['next'];
    for (;;) {
      expect(await reads().countFeedEvents({ after })).toBe(whole.events.length - events.length);
      const page = await reads().readFeedEvents({ after, first: 3 });
      events.push(...page.events);
      after = page.next;
      if (!page.hasMore) break;
    }
    expect(plainPage({ ...whole, events })).toEqual(plainPage(whole));
    expect(after).toEqual(whole.next);
    expect(await reads().readFeedEvents({ after, first: 10 })).toEqual({
      events: [],
      next: after,
      hasMore: false,
      rewrites: [],
    });
    expect(await reads().countFeedEvents({ after })).toBe(0);
  });

  it('filters by entity type, MBID, since and until combine with AND', async () => {
    const recordings = await reads().readFeedEvents({ first: 500, entities: ['recording'] });
    expect(recordings.events.map(label)).toEqual(
      expected.expectedEvents(manifest.firstPacket, frontier, ['recording']),
    );
    const removed = manifest.packets.flatMap((p) => p.replication!.removals.map((r) => r.mbid));
    const byMbid = await reads().readFeedEvents({ first: 500, mbids: removed });
    expect(byMbid.events.filter((e) => 'kind' in e).map((e) => e.mbid)).toEqual(removed);
    expect(await reads().countFeedEvents({ mbids: removed })).toBe(byMbid.events.length);
    const since = iso(manifest.packets[10]!.timestamp);
    const until = iso(manifest.packets[15]!.timestamp);
    const window = await reads().readFeedEvents({ first: 500, since, until });
    expect(window.events.map(label)).toEqual(expected.expectedEvents(186110, 186115));
    expect(await reads().countFeedEvents({ since, until })).toBe(window.events.length);
    // TIMESTAMPs compare to the millisecond (as SQLite's julianday): .878674 is .879. (Packet
    // 186111 has no events.)
    const at = (fraction: string) => since.replace('.878674', fraction);
    for (const [fraction, first] of [
      ['.878', 186110],
      ['.8794', 186110],
      ['.879499', 186110],
      ['.8795', 186112],
    ] as const) {
      const page = await reads().readFeedEvents({ first: 1, since: at(fraction) });
      expect(page.events[0]?.packet, fraction).toBe(first);
    }
  });

  if (kind === 'postgres') {
    it('answers every read as the SQLite store of the same archives does', async () => {
      const reference = sqliteReads(twin);
      const both = async <T>(read: (r: Reads) => T | Promise<T>, plain = (v: T): unknown => v) => {
        const [pg, sqlite] = await Promise.all([read(reads()), read(reference)]);
        expect(plain(pg)).toEqual(plain(sqlite));
        return sqlite;
      };
      for (let packet = manifest.firstPacket - 1; packet <= manifest.lastPacket + 1; packet++) {
        await both((r) => r.replicationPacketRow(packet));
        await both((r) => r.tableChangesOf(packet));
        await both((r) => r.rowChangeCount(packet, {}));
        for (const after of [-1, 0, 1, 2])
          await both(
            (r) => r.rowChangesPage(packet, {}, after, 2),
            (rows) => rows.map(parsedRow),
          );
      }
      const timestamps = manifest.packets.map((p) => iso(p.timestamp));
      const queries: Omit<FeedQuery, 'first' | 'after'>[] = [
        {},
        { entities: ['artist', 'recording'] },
        { mbids: ['bbb5fb86-29f4-4ffd-94d6-9976ee6621d6', '0cb5e728-cf4a-4ecd-9a2f-c2775dca1392'] },
        { since: timestamps[5], until: timestamps[20] },
        { since: timestamps[22]!.replace('.878674', '.8786') },
        { until: '2026-05-10T00:00:00Z' },
        { since: '2027-01-01T00:00:00Z' },
      ];
      for (const query of queries) {
        const pages = await both((r) => r.readFeedEvents({ ...query, first: 7 }), plainPage);
        await both((r) => r.countFeedEvents(query));
        for (let after = pages.next; after !== undefined; ) {
          const page = await both((r) => r.readFeedEvents({ ...query, after, first: 7 }), plainPage);
          await both((r) => r.countFeedEvents({ ...query, after }));
          if (!page.hasMore) break;
          after = page.next;
        }
      }
    });
  }

  it('a cursor or since before the pruned history is refused with where it starts now', async () => {
    const { sqlite, postgres } = store();
    // The cutoff as both pruning writers record it (the prunes themselves: test/sync/prune.test.ts,
    // and through GraphQL test/graphql/types/changeFeedPruned.test.ts).
    if (sqlite) recordHistoryFrom(sqlite, 186105);
    else await pgRows(postgres!.pool, RECORD_HISTORY_FROM_SQL, ['186105']);
    const old = { at: 'packetEnd', packet: 186103 } as const;
    for (const read of [
      () => reads().readFeedEvents({ after: old, first: 5 }),
      () => reads().countFeedEvents({ after: old }),
      () => reads().readFeedEvents({ since: iso(manifest.packets[0]!.timestamp), first: 5 }),
      () => reads().readFeedEvents({ until: iso(manifest.packets[2]!.timestamp), first: 5 }),
      () => reads().countFeedEvents({ until: iso(manifest.packets[2]!.timestamp) }),
      () => reads().readFeedEvents({ until: '2026-05-10T00:00:00Z', first: 5 }),
    ]) {
      const error = await (async () => read())().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HistoryPrunedError);
      expect(error).toMatchObject({ historyFrom: 186105 });
    }
    const fromCutoff = await reads().readFeedEvents({ first: 500 });
    expect(fromCutoff.events.map(label)).toEqual(expected.expectedEvents(186105, frontier));
    // An `until` inside the history held reads from the cutoff, as without it.
    const untilHeld = await reads().readFeedEvents({
      until: iso(manifest.packets[8]!.timestamp),
      first: 500,
    });
    expect(untilHeld.events.map(label)).toEqual(expected.expectedEvents(186105, 186108));
  });
});

import { expect, it } from 'vitest';
import type { LedgerReads } from '../../src/db/ledgerReads.js';
import { pgRows } from '../../src/db/postgres/sql.js';
import { type Awaitable, sqliteReads } from '../../src/db/reads.js';
import { ENTITY_TYPES } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { TEST_KEY_FINGERPRINT } from '../support/archives.js';
import {
  BOOTSTRAP,
  FAILED_DUMP,
  FIRST_PACKET,
  fillLedgerStory,
  LAST_PACKET,
  MALFORMED,
  PENDING_REPLICATION,
  QUARANTINE_PACKET,
  SYNC_TIME,
  WEBHOOK_NAMES,
} from '../support/ledgerFeed.js';
import { describeReadStores, filledWith } from '../support/readStores.js';

// Both stores synced from the same real archives (test/support/ledgerFeed.ts) answer the same.

const SYNCED_AT = SYNC_TIME.toISOString();
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describeReadStores('ledger reads', (kind, store) => {
  const twin = filledWith(store, fillLedgerStory, 120_000);
  const reads = (): LedgerReads => store().reads;

  it('the latest packet is the newest complete one with no incomplete packet before it', async () => {
    expect(await reads().latestPacket()).toEqual({
      number: QUARANTINE_PACKET,
      timestamp: '2026-05-11T04:14:26.878674Z',
      schemaSequence: 31,
      syncedAt: SYNCED_AT,
    });
  });

  it('a packet stored below the first one makes the mark stale: the packets are walked', async () => {
    const run = async (sql: string, ...args: unknown[]) => {
      const { sqlite, postgres } = store();
      if (sqlite) sqlite.sqlite.prepare(sql).run(...args);
      else await pgRows(postgres!.pool, sql, args);
    };
    // Incomplete, and first now: no packet is complete from the first one on.
    await run('INSERT INTO packets (number, created_at) VALUES (?, ?)', FIRST_PACKET - 1, SYNCED_AT);
    try {
      expect(await reads().latestPacket()).toBeUndefined();
      await run('UPDATE packets SET synced_at = ? WHERE number = ?', SYNCED_AT, FIRST_PACKET - 1);
      expect(await reads().latestPacket()).toMatchObject({ number: QUARANTINE_PACKET });
    } finally {
      await run('DELETE FROM packets WHERE number = ?', FIRST_PACKET - 1);
    }
    expect(await reads().latestPacket()).toMatchObject({ number: QUARANTINE_PACKET });
  });

  it('a packet by number; one not stored is undefined', async () => {
    expect(await reads().packetByNumber(FIRST_PACKET)).toEqual({
      number: FIRST_PACKET,
      timestamp: '2026-05-11T00:14:26.878674Z',
      schemaSequence: 31,
      syncedAt: SYNCED_AT,
    });
    // Its replication packet is PENDING: stored, not complete.
    expect(await reads().packetByNumber(PENDING_REPLICATION)).toMatchObject({ syncedAt: null });
    expect(await reads().packetByNumber(FIRST_PACKET - 1)).toBeUndefined();
  });

  it('packets come newest first, a page at a time, with their count', async () => {
    const pages = [await reads().packetsPage(undefined, 10)];
    while (pages.at(-1)!.length === 10)
      pages.push(await reads().packetsPage(pages.at(-1)!.at(-1)!.number, 10));
    expect(pages.map((p) => p.length)).toEqual([10, 10, 4, 0].slice(0, pages.length));
    expect(pages.flat().map((p) => p.number)).toEqual(range(FIRST_PACKET, LAST_PACKET).reverse());
    expect(await reads().packetCount()).toBe(24);
    // A cursor past every packet (larger than PostgreSQL's 32-bit column) reads from the newest.
    expect((await reads().packetsPage(2 ** 40, 1)).map((p) => p.number)).toEqual([LAST_PACKET]);
    expect(await reads().packetsPage(FIRST_PACKET, 10)).toEqual([]);
    await expect(async () => reads().packetsPage(undefined, -1)).rejects.toThrow(RangeError);
  });

  it('the dumps of a packet: stored, quarantined lines counted, FAILED with its error and retry', async () => {
    const byEntity = async (packet: number) =>
      Object.fromEntries((await reads().dumpsOfPacket(packet)).map((d) => [d.entity, d]));
    const dumps = await byEntity(QUARANTINE_PACKET);
    // Every tracked entity type has a row: the others had no changes that hour.
    expect(Object.keys(dumps).sort()).toEqual([...ENTITY_TYPES].sort());
    expect(Object.values(dumps).filter((d) => d.status === 'NO_CHANGES')).toHaveLength(
      ENTITY_TYPES.length - 1,
    );
    expect(dumps).toMatchObject({
      release: {
        packet: QUARANTINE_PACKET,
        entity: 'release',
        status: 'SYNCED',
        changeCount: 2,
        quarantineCount: 2,
        fileName: jsonDumpPath(QUARANTINE_PACKET, 'release'),
        error: null,
        attempts: 0,
        nextRetryAt: null,
      },
    });
    const failed = (await byEntity(186120)).work!;
    expect(failed).toMatchObject({ status: 'FAILED', changeCount: 0, attempts: 1 });
    expect(failed.error).toContain('JSON dump work of packet 186120: corrupt archive');
    expect(Date.parse(failed.nextRetryAt!)).toBeGreaterThan(SYNC_TIME.getTime());
    const first = Object.values(await byEntity(FIRST_PACKET));
    expect(
      first
        .filter((d) => d.status === 'SYNCED')
        .map((d) => d.entity)
        .sort(),
    ).toEqual(['area', 'label']);
    expect(await reads().dumpsOfPacket(FIRST_PACKET - 1)).toEqual([]);
  });

  it('a feed file by name: verified with the key, or with its signature missing; unknown is undefined', async () => {
    const name = jsonDumpPath(FIRST_PACKET, 'area');
    expect(await reads().feedFileByName(name)).toEqual({
      name,
      packet: FIRST_PACKET,
      size: 784,
      sha256: '4258331ea1a6834943ff1b683096b618f7e0e09da1e984c395ea6e7e2728cebc',
      signature: 'VERIFIED',
      fingerprint: TEST_KEY_FINGERPRINT,
      fetchedAt: SYNCED_AT,
      storedPath: `files/${name}`,
      signatureStoredPath: `files/${name}.asc`,
    });
    expect(await reads().feedFileByName(jsonDumpPath(QUARANTINE_PACKET, 'release'))).toMatchObject({
      signature: 'MISSING',
      fingerprint: null,
      signatureStoredPath: null,
    });
    expect(await reads().feedFileByName(FAILED_DUMP)).toBeUndefined();
  });

  it('failures: by packet, the replication packet before the dumps; paged by their key; counted', async () => {
    const all = await reads().failuresPage(undefined, 50);
    expect(all.map((f) => [f.packet, f.entity, f.status, f.attempts])).toEqual([
      [PENDING_REPLICATION, null, 'PENDING', 1],
      [186120, 'work', 'FAILED', 1],
    ]);
    expect(all[0]!.error).toContain(`replication-${PENDING_REPLICATION}-v2.tar.bz2`);
    expect(all[1]!.error).toContain('JSON dump work of packet 186120: corrupt archive');
    expect(all[1]).toMatchObject({ updatedAt: SYNCED_AT });
    expect(await reads().failuresPage({ packet: PENDING_REPLICATION, entity: '' }, 50)).toEqual([all[1]]);
    expect(await reads().failuresPage({ packet: 186120, entity: 'area' }, 50)).toEqual([all[1]]);
    expect(await reads().failuresPage({ packet: 186120, entity: 'work' }, 50)).toEqual([]);
    expect(await reads().failuresPage(undefined, 1)).toEqual([all[0]]);
    expect(await reads().failuresPage({ packet: 2 ** 40, entity: '' }, 1)).toEqual([]);
    expect(await reads().failureCount()).toBe(2);
  });

  it('quarantined lines exactly as received (a NUL, four-byte characters), filtered, paged, counted', async () => {
    const lines = await reads().quarantinePage({}, undefined, 50);
    expect(lines).toEqual([
      {
        packet: QUARANTINE_PACKET,
        entity: 'release',
        line: 2,
        raw: MALFORMED[0],
        reason: expect.any(String),
      },
      {
        packet: QUARANTINE_PACKET,
        entity: 'release',
        line: 4,
        raw: MALFORMED[1],
        reason: expect.any(String),
      },
    ]);
    expect(lines[1]!.reason).toMatch(/id/);
    expect(await reads().quarantinePage({}, lines[0]!, 50)).toEqual([lines[1]]);
    expect(
      await reads().quarantinePage({ packet: QUARANTINE_PACKET, entity: 'release' }, undefined, 1),
    ).toEqual([lines[0]]);
    expect(await reads().quarantinePage({ entity: 'label' }, undefined, 50)).toEqual([]);
    expect(await reads().quarantinePage({ packet: FIRST_PACKET }, undefined, 50)).toEqual([]);
    expect(await reads().quarantineCount({})).toBe(2);
    expect(await reads().quarantineCount({ packet: QUARANTINE_PACKET })).toBe(2);
    expect(await reads().quarantineCount({ entity: 'release' })).toBe(2);
    expect(await reads().quarantineCount({ packet: QUARANTINE_PACKET, entity: 'artist' })).toBe(0);
  });

  it("the bootstrap's position and, per entity type, the newest full dump imported", async () => {
    const state = await reads().bootstrapState();
    expect(state.position).toEqual(BOOTSTRAP.position);
    expect([...state.imported]).toEqual([
      ['area', { dump: '20260510-001', packet: 186099 }],
      ['label', { dump: '20260510-001', packet: 186099 }],
    ]);
  });

  it('webhooks by name in code point order, with filters as lists and their delivery record', async () => {
    const hooks = await reads().webhookStates();
    expect(hooks.map((w) => w.name)).toEqual(WEBHOOK_NAMES);
    expect(hooks[1]).toMatchObject({
      entities: ['artist', 'release-group'],
      mbids: null,
      cursor: 'p186101',
      deliveredPacket: 186101,
      deliveredEvents: 3,
      deliveries: 1,
      attempts: 0,
      retiredAt: null,
    });
    expect(hooks[2]).toMatchObject({
      entities: null,
      mbids: ['c0000000-0000-4000-8000-000000000001'],
      attempts: 1,
      failedDeliveries: 1,
      nextRetryAt: '2026-05-12T00:03:00.500Z',
    });
  });

  if (kind === 'postgres') {
    it('answers every read as the SQLite store synced from the same archives does', async () => {
      const reference = sqliteReads(twin());
      const both = async <T>(read: (r: LedgerReads) => Awaitable<T>) => {
        const [pg, sqlite] = await Promise.all([read(reads()), read(reference)]);
        expect(pg).toEqual(sqlite);
        return sqlite;
      };
      await both((r) => r.latestPacket());
      await both((r) => r.packetCount());
      await both((r) => r.failureCount());
      await both((r) => r.bootstrapState());
      await both((r) => r.webhookStates());
      for (const limit of [1, 7, 500]) {
        await both((r) => r.packetsPage(undefined, limit));
        await both((r) => r.failuresPage(undefined, limit));
        await both((r) => r.quarantinePage({}, undefined, limit));
      }
      for (const number of range(FIRST_PACKET - 1, LAST_PACKET + 1)) {
        await both((r) => r.packetByNumber(number));
        await both((r) => r.packetsPage(number, 5));
        await both((r) => r.failuresPage({ packet: number, entity: '' }, 5));
        await both((r) => r.quarantineCount({ packet: number }));
        const dumps = await both(async (r) =>
          [...(await r.dumpsOfPacket(number))].sort((a, b) => a.entity.localeCompare(b.entity)),
        );
        for (const dump of dumps) {
          if (dump.fileName) await both((r) => r.feedFileByName(dump.fileName!));
          await both((r) => r.feedFileByName(`${dump.fileName}.asc`));
        }
      }
      const files = twin()
        .sqlite.prepare('SELECT name FROM feed_files ORDER BY name')
        .pluck()
        .all() as string[];
      expect(files.length).toBeGreaterThan(40);
      for (const name of files) await both((r) => r.feedFileByName(name));
    });
  }
});

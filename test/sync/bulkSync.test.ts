import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import { currentOfMbid } from '../../src/db/currentQueries.js';
import { openForServing } from '../../src/db/readOnly.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import type { SampleFeed } from '../../src/samplefeed/server.js';
import { sqliteSyncStore } from '../../src/sync/sqliteSyncStore.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { syncContextOn, type tempDir, testLogger } from '../support/harness.js';
import { signedDumpFeed } from '../support/signedDumpFeed.js';

/**
 * Issue 16: a JSON dump that adds about as much as the database holds (the first packets synced
 * into a new database) is stored by the sync with a rollback journal, written once, as `import`
 * does (db/bulkJournal.ts); with another connection open, or below the size that pays for the
 * switch, it is stored in WAL mode as any other. Real signed archives over a real HTTP feed.
 */

const FIRST = 700;
/** Packet FIRST + 1's artist dump is signed over other bytes (a signature that never matches). */
const BAD = jsonDumpPath(FIRST + 1, 'artist');
const LINES = 2_000;
const mbid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** About 300 bytes that xz cannot shrink much, so that the archive outweighs a new database. */
const line = (n: number) =>
  JSON.stringify({ id: mbid(n), name: `E${n}`, noise: randomBytes(120).toString('hex') });

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;

beforeAll(async () => {
  ({ feed, work } = await signedDumpFeed(
    'lf-bulk-sync-',
    [FIRST, FIRST + 1].map((packet) => ({
      packet,
      entity: 'artist',
      lines: Array.from({ length: LINES }, (_, i) => line((packet - FIRST) * LINES + i + 1)),
      signature: jsonDumpPath(packet, 'artist') === BAD ? 'other bytes' : 'good',
    })),
  ));
}, 120_000);
afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

/**
 * Syncs packets FIRST..FIRST + 1 into a new database in `name`; returns the journal mode each
 * dump's transaction ran in (read when its signature is awaited, after its last line), the store,
 * and the dumps' statuses. `minBulkArchiveBytes` as sqliteSyncStore takes it; `beside` opens
 * another connection first, as `start`'s server has.
 */
async function syncInto(name: string, options: { minBulkArchiveBytes?: number; beside?: boolean }) {
  const logger = testLogger();
  const dataDir = join(work.dir, name);
  const store = openStore(join(dataDir, 'livefeed.db'));
  const reader = options.beside ? openForServing(store.path) : undefined;
  const sync = sqliteSyncStore(store, { minBulkArchiveBytes: options.minBulkArchiveBytes });
  const modes: string[] = [];
  const ingest = sync.ingestDump;
  sync.ingestDump = (o) =>
    ingest({
      ...o,
      settle: () => {
        modes.push(String(store.sqlite.pragma('journal_mode', { simple: true })));
        return o.settle!();
      },
    });
  const ctx = await syncContextOn(sync, {
    feedRoot: feed.feedRoot,
    dataDir,
    entities: ['artist'],
    logger,
    verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
  });
  await syncOnce(ctx, { from: FIRST, to: FIRST + 1 });
  const statuses = store.sqlite.prepare('SELECT packet, status FROM dumps ORDER BY packet').all();
  return { store, reader, modes, statuses };
}

describe('the sync stores a bulk-sized dump with a rollback journal', () => {
  it('alone on a new database: the dump written with a rollback journal, WAL again after, the MBID index rebuilt, a refused dump left out', async () => {
    const { store, modes, statuses } = await syncInto('alone', { minBulkArchiveBytes: 0 });
    try {
      // The refused dump stops at its signature's early check, before its last line: one mode.
      expect(modes).toEqual(['truncate']);
      expect(store.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(statuses).toEqual([
        { packet: FIRST, status: 'SYNCED' },
        { packet: FIRST + 1, status: 'FAILED' },
      ]);
      const count = store.sqlite.prepare('SELECT count(*) FROM changes WHERE packet = ?').pluck();
      expect(count.get(FIRST)).toBe(LINES);
      expect(count.get(FIRST + 1)).toBe(0);
      const index = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'changes_mbid'";
      expect(store.sqlite.prepare(index).pluck().get()).toBe(1);
      expect(currentOfMbid(store, mbid(LINES))?.latest?.packet).toBe(FIRST);
      expect(currentOfMbid(store, mbid(LINES + 1))).toBeUndefined();
      const check = store.sqlite.pragma('integrity_check', { simple: true });
      expect(check).toBe('ok');
    } finally {
      store.close();
    }
  }, 60_000);

  it('with a serving connection open: WAL mode, the same rows', async () => {
    const { store, reader, modes, statuses } = await syncInto('beside', {
      minBulkArchiveBytes: 0,
      beside: true,
    });
    try {
      expect(modes).toEqual(['wal']);
      expect(statuses).toEqual([
        { packet: FIRST, status: 'SYNCED' },
        { packet: FIRST + 1, status: 'FAILED' },
      ]);
      const seen = reader!.sqlite.prepare('SELECT count(*) FROM changes WHERE packet = ?').pluck();
      expect(seen.get(FIRST)).toBe(LINES);
    } finally {
      reader?.close();
      store.close();
    }
  }, 60_000);

  it('an archive below the size that pays for the switch stays in WAL mode', async () => {
    const { store, modes } = await syncInto('small', {});
    try {
      expect(modes).toEqual(['wal']);
      expect(store.sqlite.prepare('SELECT count(*) FROM changes').pluck().get()).toBe(LINES);
      expect(store.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      store.close();
    }
  }, 60_000);
});

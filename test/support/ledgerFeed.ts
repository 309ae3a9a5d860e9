import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { markBootstrapped } from '../../src/db/bootstrapQueries.js';
import { openStore, type Store } from '../../src/db/client.js';
import { pgRows } from '../../src/db/postgres/sql.js';
import { PUT_META } from '../../src/db/status.js';
import { recordDelivered, recordFailed, registerWebhooks } from '../../src/db/webhookQueries.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { BUNDLED_FEED_ROOT } from '../../src/samplefeed/bundled.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { postgresSyncStore } from '../../src/sync/postgres/syncStore.js';
import { sqliteSyncStore } from '../../src/sync/sqliteSyncStore.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE, writeJsonDump } from './archives.js';
import { syncContextOn, testLogger } from './harness.js';
import type { StoreUnderTest } from './readStores.js';

/**
 * The story of the ledger reads (test/db/ledgerReads.test.ts and the GraphQL suites over both
 * stores): the bundled sample feed (24 signed packets with replication packets, 186100-186123)
 * synced by the real sync with the test key in `--verify warn`, after three changes to a copy of
 * it: the release dump of packet 186104 holds two malformed lines (quarantined; its signature
 * removed: MISSING), the work dump of 186120 is corrupt on every download (FAILED), and the
 * replication packet 186105 is gone (PENDING). So the newest complete packet is 186104. Then
 * three webhooks and three full dump imports, made by the SQLite writers on a scratch file and
 * copied row for row into either store (PostgreSQL's bootstrap and webhook writers are not ported:
 * docs/POSTGRES_PORT.md steps 1 and 7).
 */

export const FIRST_PACKET = 186100;
export const LAST_PACKET = 186123;
/** The packet whose release dump holds the quarantined lines; the newest complete packet. */
export const QUARANTINE_PACKET = 186104;
export const FAILED_DUMP = jsonDumpPath(186120, 'work');
export const PENDING_REPLICATION = 186105;
/** The malformed lines of the release dump of {@link QUARANTINE_PACKET} (lines 2 and 4), as written. */
export const MALFORMED = ['{"id": "broken ✓ line with a NUL \u0000 inside"', '{"name": "no id — 𝄞"}'];
/** The full dump imports recorded: per entity type the newest by name counts. */
export const BOOTSTRAP = {
  position: {
    dump: '20260510-001',
    packet: 186099,
    entities: ['area', 'label'],
    at: '2026-05-10T03:00:00.123Z',
  },
  imports: [
    ['20260509-001', 'area', 186075],
    ['20260510-001', 'area', 186099],
    ['20260510-001', 'label', 186099],
  ] as const,
};
/** The webhooks registered, in the order of their names by code point. */
export const WEBHOOK_NAMES = ['A-hook', 'b-hook', 'émile'];

const RELEASE_LINE = (n: number) =>
  JSON.stringify({
    id: `c0000000-0000-4000-8000-00000000000${n}`,
    title: `Release ${n} — ✓`,
    status: 'Official',
  });

/** A copy of the bundled feed under `dir` with the changes above; the feed server is started on it. */
async function startLedgerFeed(dir: string): Promise<SampleFeed> {
  const root = join(dir, 'feed');
  await cp(BUNDLED_FEED_ROOT, root, { recursive: true });
  const release = jsonDumpPath(QUARANTINE_PACKET, 'release');
  await writeJsonDump(root, {
    packet: QUARANTINE_PACKET,
    entity: 'release',
    lines: [RELEASE_LINE(1), MALFORMED[0]!, RELEASE_LINE(2), MALFORMED[1]!],
    timestamp: '2026-05-11 04:14:26.878674+00',
  });
  await rm(join(root, `${release}.asc`));
  for (const name of [`replication-${PENDING_REPLICATION}-v2.tar.bz2`]) {
    await rm(join(root, name));
    await rm(join(root, `${name}.asc`));
  }
  const feed = await startSampleFeed({ root });
  feed.faults.add({ path: FAILED_DUMP, fault: { kind: 'corrupt' }, times: Infinity });
  return feed;
}

/** The clock of both syncs, so that their times agree (a day after the last packet). */
export const SYNC_TIME = new Date('2026-05-12T23:00:00.000Z');

/** Syncs the feed into `store` once at {@link SYNC_TIME}, with the test key in warn mode and replication packets. */
async function syncInto(store: SyncStore, feed: SampleFeed, dataDir: string): Promise<void> {
  const logger = testLogger();
  const ctx = await syncContextOn(store, {
    feedRoot: feed.feedRoot,
    dataDir,
    replicationPackets: true,
    verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'warn', logger),
    logger,
    now: () => SYNC_TIME,
  });
  try {
    const report = await syncOnce(ctx, { from: FIRST_PACKET });
    // A PENDING replication packet is no problem yet (asked again until an hour has passed).
    if (report.problems.length !== 1 || report.problems[0]!.file !== FAILED_DUMP)
      throw new Error(`the ledger story's sync reported ${JSON.stringify(report.problems)}`);
  } finally {
    await ctx.feed.client.close();
  }
}

/** The webhooks and bootstrap rows, made by the SQLite writers. */
function recordOnSqlite(store: Store): void {
  const target = (name: string, entities: string[] | null, mbids: string[] | null) => ({
    name,
    displayUrl: `http://127.0.0.1:9/${encodeURIComponent(name)}`,
    entities: entities as never,
    mbids,
  });
  registerWebhooks(
    store,
    [
      target('b-hook', ['artist', 'release-group'], null),
      target('émile', null, ['c0000000-0000-4000-8000-000000000001']),
      target('A-hook', null, null),
    ],
    '2026-05-12T00:00:00.000Z',
  );
  recordDelivered(store, 'b-hook', {
    cursor: 'p186101',
    packet: 186101,
    events: 3,
    at: '2026-05-12T00:01:00.000Z',
  });
  recordFailed(store, 'émile', {
    error: 'HTTP 503 from http://127.0.0.1:9/%C3%A9mile',
    at: '2026-05-12T00:02:00.000Z',
    nextRetryAt: '2026-05-12T00:03:00.500Z',
  });
  for (const [dump, entity, packet] of BOOTSTRAP.imports) markBootstrapped(store, dump, entity, packet);
  store.sqlite.prepare(PUT_META).run('bootstrap_position', JSON.stringify(BOOTSTRAP.position));
}

const WEBHOOK_COLUMNS =
  'name, url, entities, mbids, cursor, delivered_packet, attempts, last_error, last_error_at, next_retry_at, ' +
  'last_attempt_at, last_success_at, delivered_events, deliveries, failed_deliveries, added_at, retired_at';

/** Runs a statement written once (`?` parameters) on the store being filled (test/support/stores.ts `rows`). */
export type RunSql = (sql: string, ...args: unknown[]) => Promise<unknown>;

/**
 * The webhooks and bootstrap rows, made by the SQLite writers on a scratch SQLite file in `dir`
 * (an empty database: the webhooks start from the start of the history) and copied row for row
 * with `run`, so that both stores hold the same rows.
 */
async function recordUnported(dir: string, run: RunSql): Promise<void> {
  const scratch = openStore(join(dir, 'unported.sqlite'));
  try {
    recordOnSqlite(scratch);
    const copy = async (table: string, columns: string, where: string) => {
      const slots = columns.split(', ').map(() => '?');
      const rows = scratch.sqlite
        .prepare(`SELECT ${columns} FROM ${table} ${where}`)
        .raw()
        .all() as unknown[][];
      for (const row of rows)
        await run(`INSERT INTO ${table} (${columns}) VALUES (${slots.join(', ')})`, ...row);
    };
    await copy('webhooks', WEBHOOK_COLUMNS, '');
    await copy('meta', 'key, value', "WHERE key LIKE 'bootstrap%'");
  } finally {
    scratch.close();
  }
}

/**
 * Fills a new database with the story through `writer` (either store's sync writer), with the
 * feed and kept files under `dir`; `run` writes the rows no PostgreSQL writer makes yet.
 * @throws Error when the sync reports another problem than the FAILED dump of the story.
 */
export async function buildLedgerOn(writer: SyncStore, dir: string, run: RunSql): Promise<void> {
  const feed = await startLedgerFeed(dir);
  try {
    await syncInto(writer, feed, join(dir, 'data'));
  } finally {
    await feed.close();
  }
  await recordUnported(dir, run);
}

/**
 * Fills `target` (test/support/readStores.ts) with the story and returns the SQLite store that
 * holds the same rows: `target` itself, or for PostgreSQL a twin filled the same way in a file of
 * `target.dir`.
 */
export async function fillLedgerStory(target: StoreUnderTest): Promise<Store> {
  const sqlite = target.sqlite ?? openStore(join(target.dir, 'twin.sqlite'));
  await buildLedgerOn(sqliteSyncStore(sqlite), join(target.dir, 'sqlite'), async (sql, ...args) =>
    sqlite.sqlite.prepare(sql).run(...args),
  );
  const pg = target.postgres;
  if (pg) {
    await buildLedgerOn(postgresSyncStore(pg), join(target.dir, 'postgres'), (sql, ...args) =>
      pgRows(pg.pool, sql, args),
    );
  }
  return sqlite;
}

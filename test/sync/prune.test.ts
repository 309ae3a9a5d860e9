import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFeedEvents } from '../../src/db/changeFeedQueries.js';
import { openStore, type Store } from '../../src/db/client.js';
import type { CurrentRow } from '../../src/db/currentQueries.js';
import type { FeedPosition } from '../../src/db/feedPosition.js';
import { HistoryPrunedError } from '../../src/db/feedWindow.js';
import { prunedBefore } from '../../src/db/historyQueries.js';
import { changeId } from '../../src/db/keys.js';
import { parseKeepFiles } from '../../src/files/retentionPolicy.js';
import type { PruneResult } from '../../src/sync/prune.js';
import type { SqliteSyncStore } from '../../src/sync/syncStore.js';
import { buildCurrentStateHistoryOn, FILLER, MBID } from '../support/currentStateFeed.js';
import { gql, tempDir, testApp, testLogger } from '../support/harness.js';
import { describeStores, SQLITE_STORES, type TestDatabase } from '../support/stores.js';

/**
 * `--keep-history` on both stores (issue 14 Bounded history, issue 17): the current state story
 * (test/support/currentStateFeed.ts) stored through each store's sync writer, pruned to the newest
 * two packets; every MBID's current state stays as before, and as on a SQLite twin pruned alike.
 */

const NOW = new Date('2026-05-12T00:00:00Z');
const KEEP_TWO = parseKeepFiles('2');

/** Every MBID a change or a removal names, in one order for both stores. */
async function heldMbids(db: TestDatabase): Promise<string[]> {
  const rows = await db.rows<{ mbid: string }>('SELECT mbid FROM changes UNION SELECT mbid FROM removals');
  return rows.map((row) => row.mbid).sort();
}

/** The current state of every MBID held. */
async function currentState(db: TestDatabase): Promise<(CurrentRow | undefined)[]> {
  return db.reads.currentOfMbids(await heldMbids(db));
}

const count = async (db: TestDatabase, sql: string) => Number((await db.rows<{ n: number }>(sql))[0]!.n);

let reference: { dir: Awaited<ReturnType<typeof tempDir>>; path: string; state: (CurrentRow | undefined)[] };

beforeAll(async () => {
  // The SQLite twin: the same story, pruned the same way, its current state the reference.
  const dir = await tempDir('lf-prune-reference-');
  const db = await SQLITE_STORES.create(dir.dir);
  try {
    await buildCurrentStateHistoryOn(db.store, dir.dir);
    await db.store.history.prune(KEEP_TWO, NOW, testLogger());
    reference = { dir, path: db.db, state: await currentState(db) };
  } finally {
    await db.close();
  }
}, 60_000);

afterAll(async () => {
  await reference?.dir.cleanup();
});

describeStores('--keep-history: pruning keeps the current state whole', (stores) => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const indexColumn = stores.kind === 'sqlite' ? 'rowid' : 'id';
  const indexed = async () =>
    (await db.rows<{ id: number }>(`SELECT ${indexColumn} AS id FROM search_index ORDER BY 1`)).map(
      (r) => r.id,
    );

  beforeAll(async () => {
    dir = await tempDir('lf-prune-');
    if (stores.kind === 'sqlite') {
      // A database made before incremental vacuum: created without it, then migrated by openStore.
      const old = new Database(join(dir.dir, 'livefeed.db'));
      old.exec('CREATE TABLE early (x)');
      old.close();
    }
    db = await stores.create(dir.dir);
    await buildCurrentStateHistoryOn(db.store, dir.dir);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await dir?.cleanup();
  });

  it('the window: the newest N packets, or the packets whose TIMESTAMP is within the age', async () => {
    expect(await db.store.history.cutoff(parseKeepFiles('all'), NOW)).toBeUndefined();
    expect(await db.store.history.cutoff(KEEP_TWO, NOW)).toBe(13);
    // Every packet of the story has the builder's TIMESTAMP 2026-05-11 21:14:26Z.
    expect(await db.store.history.cutoff(parseKeepFiles('1d'), NOW)).toBe(10);
    expect(await db.store.history.cutoff(parseKeepFiles('1h'), NOW)).toBe(15);
  });

  it('prunes changes and row changes before the window, never a current version; history_from first', async () => {
    const before = await currentState(db);
    const changesBefore = await count(db, 'SELECT count(*) AS n FROM changes');
    const indexBefore = await indexed();
    const removalsBefore = await db.rows(
      'SELECT mbid, packet, kind, merged_into FROM removals ORDER BY packet, mbid, kind',
    );
    expect(indexBefore.length).toBeGreaterThan(FILLER);

    const result =
      stores.kind === 'sqlite'
        ? await pruneSqliteWatched(db.store as SqliteSyncStore)
        : await prunePostgresWatched(db);

    // Every current version is still there: the same status, packet and newest line for every MBID,
    // as before and as on the SQLite twin.
    const after = await currentState(db);
    expect(after).toEqual(before);
    expect(after).toEqual(reference.state);
    // Packets 10 and 11 held 9 + FILLER + 2 lines; the current ones stay: FILLER fillers, and of the
    // story's MBIDs those whose newest line is from 10 or 11 (all but `reappeared`, now from 14).
    expect(result).toMatchObject({ historyFrom: 13, changes: 3 });
    expect(await count(db, 'SELECT count(*) AS n FROM changes')).toBe(changesBefore - 3);
    expect(await count(db, `SELECT count(*) AS n FROM changes WHERE id < ${changeId(13, 'area', 0)}`)).toBe(
      FILLER + 8,
    );
    expect(await db.rows('SELECT DISTINCT packet FROM row_changes')).toEqual([{ packet: 13 }]);
    expect(result.rowChanges).toBeGreaterThan(0);
    expect(await db.rows("SELECT value FROM meta WHERE key = 'history_from'")).toEqual([{ value: '13' }]);
    expect(await db.reads.historyFrom()).toBe(13);
    // The search index holds current versions only, so it keeps every entry; removals all stay.
    expect(await indexed()).toEqual(indexBefore);
    expect(
      await db.rows('SELECT mbid, packet, kind, merged_into FROM removals ORDER BY packet, mbid, kind'),
    ).toEqual(removalsBefore);
    if (stores.kind === 'sqlite') {
      expect((db.store as SqliteSyncStore).sqlite.pragma('auto_vacuum', { simple: true })).toBe(2);
      expect(await count(db, 'SELECT freelist_count AS n FROM pragma_freelist_count')).toBe(0);
    } else {
      // No VACUUM of livefeed's own on PostgreSQL: autovacuum reclaims the space.
      expect(result.freedPages).toBe(0);
    }

    const again = await db.store.history.prune(KEEP_TWO, NOW, testLogger());
    expect(again).toMatchObject({ historyFrom: 13, changes: 0, rowChanges: 0 });
    // A wider window later never moves history_from back.
    expect(await db.store.history.prune(parseKeepFiles('1d'), NOW, testLogger())).toMatchObject({
      changes: 0,
      rowChanges: 0,
    });
    expect(await db.reads.prunedBefore()).toBe(13);
  });
});

/**
 * SQLite: the first batch is gone before the pruning first yields; the cutoff is recorded already,
 * so a change stream cursor before it gets HISTORY_PRUNED, never a page read across a half-pruned
 * range. The file is switched to incremental vacuum once.
 */
async function pruneSqliteWatched(store: SqliteSyncStore): Promise<PruneResult> {
  expect(store.sqlite.pragma('auto_vacuum', { simple: true })).toBe(0);
  const changesBefore = store.sqlite.prepare('SELECT count(*) FROM changes').pluck().get() as number;
  const pruning = store.history.prune(KEEP_TWO, NOW, testLogger());
  expect(store.sqlite.prepare('SELECT count(*) FROM changes').pluck().get()).toBeLessThan(changesBefore);
  expect(prunedBefore(store)).toBe(13);
  const oldCursor: FeedPosition = { at: 'packetEnd', packet: 10 };
  expect(() => readFeedEvents(store, { first: 10, after: oldCursor })).toThrow(HistoryPrunedError);
  return pruning;
}

/**
 * PostgreSQL: another session holds `changes` in SHARE mode, so the pruning's first DELETE waits
 * on it; by then `history_from` is committed and no row is gone. Then the lock goes.
 */
async function prunePostgresWatched(db: TestDatabase): Promise<PruneResult> {
  const changesBefore = await count(db, 'SELECT count(*) AS n FROM changes');
  const blocker = new pg.Client({ connectionString: db.db });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE changes IN SHARE MODE');
    const pruning = db.store.history.prune(KEEP_TWO, NOW, testLogger());
    pruning.catch(() => {});
    for (;;) {
      const waiting = await db.rows(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH page AS%'",
      );
      if (waiting.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await db.rows("SELECT value FROM meta WHERE key = 'history_from'")).toEqual([{ value: '13' }]);
    expect(await db.reads.prunedBefore()).toBe(13);
    expect(await count(db, 'SELECT count(*) AS n FROM changes')).toBe(changesBefore);
    await blocker.query('COMMIT');
    return await pruning;
  } finally {
    await blocker.end();
  }
}

describe('--keep-history over GraphQL (SQLite; GraphQL over PostgreSQL comes with step 4)', () => {
  it('service { historyFrom }, Entity.historyFrom, history from the window plus the current version', async () => {
    const app = testApp(reference.path, reference.dir.dir);
    try {
      const answer = await gql(
        app,
        `query($a: ID!, $b: ID!) { service { historyFrom }
          a: entity(mbid: $a) { historyFrom latest { packet } history { nodes { packet } } }
          b: entity(mbid: $b) { historyFrom latest { packet } history { nodes { packet } } } }`,
        { a: MBID.replaced, b: MBID.reappeared },
      );
      expect(answer).toEqual({
        data: {
          service: { historyFrom: 13 },
          a: { historyFrom: 13, latest: { packet: 11 }, history: { nodes: [{ packet: 11 }] } },
          b: { historyFrom: 13, latest: { packet: 14 }, history: { nodes: [{ packet: 14 }] } },
        },
      });
      const resolved = await gql(app, 'query($m: [ID!]!) { resolve(mbids: $m) { status target { mbid } } }', {
        m: [MBID.chainStart],
      });
      expect(resolved.data!.resolve).toEqual([{ status: 'MERGED', target: { mbid: MBID.chainEnd } }]);
    } finally {
      app.store.close();
    }
  });
});

it('a new database uses incremental vacuum from the start', async () => {
  const dir = await tempDir('lf-prune-new-');
  try {
    const store: Store = openStore(join(dir.dir, 'new.db'));
    expect(store.sqlite.pragma('auto_vacuum', { simple: true })).toBe(2);
    store.close();
  } finally {
    await dir.cleanup();
  }
});

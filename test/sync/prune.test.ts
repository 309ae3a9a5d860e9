import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFeedEvents } from '../../src/db/changeFeedQueries.js';
import { openStore, type Store } from '../../src/db/client.js';
import { currentOfMbids } from '../../src/db/currentQueries.js';
import type { FeedPosition } from '../../src/db/feedPosition.js';
import { HistoryPrunedError } from '../../src/db/feedWindow.js';
import { prunedBefore } from '../../src/db/historyQueries.js';
import { changeId } from '../../src/db/keys.js';
import { parseKeepFiles } from '../../src/files/retentionPolicy.js';
import { historyCutoff, pruneHistory } from '../../src/sync/prune.js';
import { buildCurrentStateHistory, FILLER, MBID } from '../support/currentStateFeed.js';
import { gql, tempDir, testApp, testLogger } from '../support/harness.js';

const NOW = new Date('2026-05-12T00:00:00Z');

describe('--keep-history: pruning keeps the current state whole', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  // Every MBID a change or a removal names, with its current state (newest line included).
  const currentState = () => {
    const mbids = store.sqlite
      .prepare('SELECT mbid FROM changes UNION SELECT mbid FROM removals ORDER BY mbid')
      .pluck()
      .all() as string[];
    return currentOfMbids(store, mbids);
  };
  const count = (sql: string) => store.sqlite.prepare(sql).pluck().get() as number;

  beforeAll(async () => {
    dir = await tempDir('lf-prune-');
    // A database made before incremental vacuum: created without it, then migrated by openStore.
    const path = join(dir.dir, 'livefeed.db');
    const old = new Database(path);
    old.exec('CREATE TABLE early (x)');
    old.close();
    store = openStore(path);
    await buildCurrentStateHistory(store, dir.dir);
  }, 60_000);
  afterAll(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('the window: the newest N packets, or the packets whose TIMESTAMP is within the age', () => {
    expect(historyCutoff(store, parseKeepFiles('all'), NOW)).toBeUndefined();
    expect(historyCutoff(store, parseKeepFiles('2'), NOW)).toBe(13);
    // Every packet of the story has the builder's TIMESTAMP 2026-05-11 21:14:26Z.
    expect(historyCutoff(store, parseKeepFiles('1d'), NOW)).toBe(10);
    expect(historyCutoff(store, parseKeepFiles('1h'), NOW)).toBe(15);
  });

  it('prunes changes and row changes before the window, never a current version; frees pages', async () => {
    const before = currentState();
    const changesBefore = count('SELECT count(*) FROM changes');
    expect(store.sqlite.pragma('auto_vacuum', { simple: true })).toBe(0);

    const pruning = pruneHistory(store, parseKeepFiles('2'), NOW, testLogger());
    // The first batch is gone before pruneHistory first yields; the cutoff is recorded already, so
    // a change stream cursor before it gets HISTORY_PRUNED, never a page read across a half-pruned range.
    expect(count('SELECT count(*) FROM changes')).toBeLessThan(changesBefore);
    expect(prunedBefore(store)).toBe(13);
    const oldCursor: FeedPosition = { at: 'packetEnd', packet: 10 };
    expect(() => readFeedEvents(store, { first: 10, after: oldCursor })).toThrow(HistoryPrunedError);
    const result = await pruning;

    expect(store.sqlite.pragma('auto_vacuum', { simple: true })).toBe(2);
    // Every current version is still there: the same status, packet and newest line for every MBID.
    expect(currentState()).toEqual(before);
    // Packets 10 and 11 held 9 + FILLER + 2 lines; the current ones stay: FILLER fillers, and of the
    // story's MBIDs those whose newest line is from 10 or 11 (all but `reappeared`, now from 14).
    expect(result.changes).toBe(3);
    expect(count('SELECT count(*) FROM changes')).toBe(changesBefore - 3);
    expect(count(`SELECT count(*) FROM changes WHERE id < ${changeId(13, 'area', 0)}`)).toBe(FILLER + 8);
    expect(store.sqlite.prepare('SELECT DISTINCT packet FROM row_changes').pluck().all()).toEqual([13]);
    expect(result.rowChanges).toBeGreaterThan(0);
    expect(count('PRAGMA freelist_count')).toBe(0);
    expect(result.historyFrom).toBe(13);

    const again = await pruneHistory(store, parseKeepFiles('2'), NOW, testLogger());
    expect(again).toMatchObject({ changes: 0, rowChanges: 0 });
  });

  it('GraphQL: service { historyFrom }, Entity.historyFrom, history from the window plus the current version', async () => {
    const app = testApp(store.path, dir.dir);
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
    const store = openStore(join(dir.dir, 'new.db'));
    expect(store.sqlite.pragma('auto_vacuum', { simple: true })).toBe(2);
    store.close();
  } finally {
    await dir.cleanup();
  }
});

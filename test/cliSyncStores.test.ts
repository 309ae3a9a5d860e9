import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { EntityType } from '../src/feed/entities.js';
import { parseKeepFiles } from '../src/files/retentionPolicy.js';
import { type SampleFeed, startSampleFeed } from '../src/samplefeed/server.js';
import { syncOnce } from '../src/sync/worker.js';
import { startCli, startSync } from './support/cli.js';
import { syncDemoReference } from './support/demoReference.js';
import { syncContextOn, tempDir, testLogger } from './support/harness.js';
import { POSTGRES_TEST_PASSWORD } from './support/postgres.js';
import {
  describeStores,
  halfDumpsOf,
  SQLITE_STORES,
  snapshotStore,
  type TestDatabase,
} from './support/stores.js';
import { writeSyntheticFeed } from './support/syntheticFeed.js';

/**
 * `livefeed sync` as a real process on both stores (issue 17): `sync --once --db <SQLite file or
 * postgres:// URL>` against the sample feed on port 0 ends with the rows of a clean in-process
 * sync into SQLite (JSON dumps; and the demo, replication packets included), and a sync killed
 * with kill -9 then resumed ends there too, never showing half a dump in between.
 */

const ENTITIES: EntityType[] = ['area', 'work'];
const FIRST = 800;
const PACKETS = 4;

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;
let reference: Record<string, unknown>;
/** A clean in-process sync of the bundled feed, replication packets included, verified with its TEST key. */
let demoReference: Record<string, unknown>;
/** {@link demoReference} pruned to the newest {@link KEEP_HISTORY} packets in process. */
let prunedReference: Record<string, unknown>;
const KEEP_HISTORY = '2';

beforeAll(async () => {
  work = await tempDir('lf-cli-stores-');
  const root = join(work.dir, 'feed');
  await writeSyntheticFeed(root, {
    firstPacket: FIRST,
    packets: PACKETS,
    entities: ENTITIES,
    linesPerDump: 3000,
    malformedEvery: 101,
  });
  feed = await startSampleFeed({ root });
  const dataDir = join(work.dir, 'reference');
  const db = await SQLITE_STORES.create(dataDir);
  try {
    const ctx = await syncContextOn(db.store, { feedRoot: feed.feedRoot, dataDir, entities: ENTITIES });
    expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
    await ctx.feed.client.close();
    reference = await snapshotStore(db);
  } finally {
    await db.close();
  }
  const demo = await syncDemoReference(join(work.dir, 'demo-reference'));
  try {
    demoReference = await snapshotStore(demo);
    await demo.store.history.prune(parseKeepFiles(KEEP_HISTORY), new Date(), testLogger());
    prunedReference = await snapshotStore(demo);
  } finally {
    await demo.close();
  }
}, 90_000);

afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

describeStores('livefeed sync as a real process', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const sync = (...more: string[]) =>
    startSync(feed.feedRoot, data.dir, [
      '--db',
      db.db,
      '--entities',
      ENTITIES.join(','),
      '--from',
      String(FIRST),
      ...more,
    ]);

  afterEach(async () => {
    await db?.close();
    await data?.cleanup();
  });

  it('sync --once stores the feed as a clean sync does, and says where', async () => {
    data = await tempDir('lf-cli-store-');
    db = await stores.create(data.dir);
    const run = sync('--once');
    const exit = await run.exited;
    expect(exit.code, run.stderr.join('\n')).toBe(0);
    expect(await snapshotStore(db)).toEqual(reference);
    expect(run.events().find((e) => e.event === 'sync-done')).toMatchObject({
      latest: FIRST + PACKETS - 1,
      pending: 0,
      failed: 0,
    });
    if (stores.kind === 'postgres') {
      expect(run.events().find((e) => e.event === 'database')?.database).toMatch(
        /^postgres:\/\/livefeed_test:\*\*\*@127\.0\.0\.1:\d+\//,
      );
    }
    expect(run.stderr.join('\n')).not.toContain(POSTGRES_TEST_PASSWORD);
  }, 60_000);

  it('sync --demo --once, replication packets included, stores what a clean sync of the bundled feed stores', async () => {
    data = await tempDir('lf-cli-store-demo-');
    db = await stores.create(data.dir);
    const run = startCli(['sync', '--demo', '--once', '--db', db.db, '--data-dir', data.dir]);
    const exit = await run.exited;
    expect(exit.code, run.stderr.join('\n')).toBe(0);
    const snapshot = await snapshotStore(db);
    expect(snapshot).toEqual(demoReference);
    expect((snapshot.row_changes as { count: number }).count).toBeGreaterThan(0);
    expect((snapshot.replication_packets as unknown[]).length).toBeGreaterThan(0);
    expect(await db.rows("SELECT value FROM meta WHERE key = 'demo'")).toEqual([{ value: 'true' }]);
  }, 60_000);

  it('sync --demo --once --keep-history 2 prunes as the SQLite sync does; the current state stays whole', async () => {
    data = await tempDir('lf-cli-store-history-');
    db = await stores.create(data.dir);
    const run = startCli([
      'sync',
      '--demo',
      '--once',
      '--keep-history',
      KEEP_HISTORY,
      '--db',
      db.db,
      '--data-dir',
      data.dir,
      '--log-level',
      'info',
    ]);
    const exit = await run.exited;
    expect(exit.code, run.stderr.join('\n')).toBe(0);
    const pruned = run.events().find((e) => e.event === 'history-pruned');
    expect(pruned).toMatchObject({ changes: expect.any(Number), rowChanges: expect.any(Number) });
    expect((pruned!.changes as number) + (pruned!.rowChanges as number)).toBeGreaterThan(0);
    expect(await snapshotStore(db)).toEqual(prunedReference);
    expect(prunedReference).not.toEqual(demoReference);
    expect(await db.rows("SELECT value FROM meta WHERE key = 'history_from'")).toEqual([
      { value: String(pruned!.historyFrom) },
    ]);
  }, 60_000);

  it('a sync killed with kill -9, twice, then resumed ends as a clean sync; no half dump is ever visible', async () => {
    data = await tempDir('lf-cli-store-kill-');
    db = await stores.create(data.dir);
    const total = PACKETS * ENTITIES.length;
    const stored = (events: Record<string, unknown>[]) =>
      events.filter((e) => e.event === 'dump-stored').length;
    // Killed once a first and a second dump of the run were stored, a moment into the next one
    // (its download, check or transaction).
    for (const [round, dumps] of [1, 2].entries()) {
      const run = sync('--once');
      await run
        .waitUntil((events) => stored(events) >= dumps, `${dumps} dumps stored`)
        .then(() => sleep(20))
        .catch(() => undefined);
      run.child.kill('SIGKILL');
      await run.exited;
      expect(await halfDumpsOf(db), `after kill ${round + 1}`).toEqual([]);
      const synced = await db.rows<{ n: number }>("SELECT count(*) AS n FROM dumps WHERE status = 'SYNCED'");
      expect(synced[0]!.n).toBeLessThan(total);
    }
    const last = sync('--once');
    const exit = await last.exited;
    expect(exit.code, last.stderr.join('\n')).toBe(0);
    expect(await halfDumpsOf(db)).toEqual([]);
    expect(await snapshotStore(db)).toEqual(reference);
  }, 90_000);
});

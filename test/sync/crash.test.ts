import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { EntityType } from '../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { type CliProcess, startSync } from '../support/cli.js';
import { type DbSnapshot, integrityCheck, snapshotDb, snapshotFiles } from '../support/dbSnapshot.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import {
  describeStores,
  halfDumpsOf,
  SQLITE_STORES,
  snapshotStore,
  type TestDatabase,
} from '../support/stores.js';
import { writeSyntheticFeed } from '../support/syntheticFeed.js';

/**
 * Issue 5, crashes: a real `livefeed sync` process is stopped at random points (SIGKILL, and
 * SIGTERM / SIGINT in follow mode), resumed each time on the same database, and must end exactly
 * where an uninterrupted sync into SQLite ends, on both stores (issue 17: "a sync killed with
 * kill -9 leaves the database as a clean run would"). After every stop the database holds no
 * half-stored dump (and a SQLite file passes `PRAGMA integrity_check`). Set LIVEFEED_CRASH_SEED to
 * replay a run.
 */

const ENTITIES: EntityType[] = ['area', 'work'];
const FIRST = 800;
const PACKETS = 6;
const KILLS = 4;

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;
/** The uninterrupted sync's rows as both stores give them. */
let reference: Record<string, unknown>;
/** SQLite only: the file's content with its search index (rowids are change ids), which snapshotStore leaves out. */
let referenceFile: DbSnapshot;
let referenceFiles: Record<string, string>;
/** Wall time of the uninterrupted in-process sync, ms: the scale of the random kill points. */
let referenceMs = 0;

/** A small seeded PRNG (mulberry32): kill points are random but replayable. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

async function syncedDumps(db: TestDatabase): Promise<number> {
  return (await db.rows<{ n: number }>("SELECT count(*) AS n FROM dumps WHERE status = 'SYNCED'"))[0]!.n;
}

/** The writer lock's holder row (both stores name the holder there). */
function lockRows(db: TestDatabase): Promise<unknown[]> {
  return db.rows('SELECT pid FROM sync_lock');
}

beforeAll(async () => {
  work = await tempDir('lf-crash-');
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
    const started = performance.now();
    try {
      expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
    } finally {
      await ctx.feed.client.close();
    }
    referenceMs = performance.now() - started;
    reference = await snapshotStore(db);
    referenceFile = snapshotDb(db.db);
    referenceFiles = snapshotFiles(dataDir);
  } finally {
    await db.close();
  }
}, 90_000);

afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

describeStores('a sync stopped at random points, then resumed, equals an uninterrupted sync', (stores) => {
  let db: TestDatabase | undefined;
  afterEach(() => db?.close());

  it(`survives ${KILLS} kill -9, a SIGTERM and a SIGINT`, async () => {
    const seed = Number(process.env.LIVEFEED_CRASH_SEED ?? Date.now() % 1_000_000);
    const next = random(seed);
    const dataDir = join(work.dir, `crashed-${stores.kind}`);
    db = await stores.create(dataDir);
    const opened = db;
    const cli = (...more: string[]): CliProcess =>
      startSync(feed.feedRoot, dataDir, [
        '--db',
        opened.db,
        '--entities',
        ENTITIES.join(','),
        '--from',
        String(FIRST),
        ...more,
      ]);
    const total = PACKETS * ENTITIES.length;
    const stops: string[] = [];
    let takeovers = 0;
    const checkSound = async (what: string) => {
      // PostgreSQL has no integrity check of a database: its crash safety is its WAL's, not ours.
      if (stores.kind === 'sqlite')
        expect(integrityCheck(opened.db), `${what} (seed ${seed})`).toEqual(['ok']);
      expect(await halfDumpsOf(opened), `${what} (seed ${seed})`).toEqual([]);
    };

    // 1. SIGTERM in follow mode while dumps are being stored: a clean stop within seconds.
    const followed = cli('--poll-interval', '1');
    await followed.waitForEvent('dump-stored');
    const termAt = performance.now();
    followed.child.kill('SIGTERM');
    const term = await followed.exited;
    const termMs = performance.now() - termAt;
    expect(term.code, followed.stderr.join('\n')).toBe(0);
    expect(termMs).toBeLessThan(10_000);
    expect(await lockRows(opened)).toEqual([]);
    await checkSound('after SIGTERM');
    stops.push(
      `SIGTERM: exited 0 after ${Math.round(termMs)} ms, ${await syncedDumps(opened)}/${total} dumps stored`,
    );

    // 2. kill -9 at random points of the work left: after a random number of dumps stored by this
    // run, a random moment into the next one (download, verification or its transaction). Every
    // next run finds the dead holder's lock and takes it over: on SQLite by its `lock-takeover`;
    // on PostgreSQL the advisory lock ended with the killed session, only its holder row stays.
    const perDumpMs = referenceMs / total;
    for (let round = 1; round <= KILLS; round++) {
      const before = await syncedDumps(opened);
      const deadHolder = (await lockRows(opened)).length > 0;
      const child = cli('--once');
      const dumps = Math.floor(next() * Math.max(1, (total - before) / 2));
      const delay = Math.round(next() * perDumpMs * 1.5);
      const stored = (logged: Record<string, unknown>[]) =>
        logged.filter((e) => e.event === 'dump-stored').length;
      await child
        .waitUntil(
          (logged) => logged.some((e) => e.event === 'sync-start') && stored(logged) >= dumps,
          `${dumps} dumps`,
        )
        .then(() => sleep(delay))
        .catch(() => undefined);
      const killed = child.child.exitCode === null && child.child.kill('SIGKILL');
      const exit = await child.exited;
      // The run took the lock and synced (a run refused the lock exits 5 before its sync starts).
      expect(
        child.events().some((e) => e.event === 'sync-start'),
        `round ${round} (seed ${seed}): ${child.stderr.join('\n')}`,
      ).toBe(true);
      expect(
        child.events().some((e) => e.event === 'lock-takeover'),
        `round ${round} (seed ${seed})`,
      ).toBe(stores.kind === 'sqlite' && deadHolder);
      if (deadHolder) takeovers++;
      await checkSound(`after kill ${round}`);
      stops.push(
        killed
          ? `kill -9 in run ${round}, ${delay} ms after its dump #${dumps}: ${await syncedDumps(opened)}/${total} dumps stored`
          : `run ${round} ended before its kill point (exit ${exit.code})`,
      );
    }

    // 3. SIGINT in follow mode at a random moment.
    const interrupted = cli('--poll-interval', '1');
    await interrupted.waitForEvent('sync-start');
    await sleep(Math.round(next() * referenceMs * 0.5));
    interrupted.child.kill('SIGINT');
    expect((await interrupted.exited).code, interrupted.stderr.join('\n')).toBe(0);
    await checkSound('after SIGINT');
    stops.push(`SIGINT: ${await syncedDumps(opened)}/${total} dumps stored`);

    // 4. A last run to the end, then the same database and files as the uninterrupted sync.
    const last = cli('--once');
    expect((await last.exited).code, last.stderr.join('\n')).toBe(0);
    await checkSound('at the end');
    expect(await snapshotStore(opened), `seed ${seed}`).toEqual(reference);
    if (stores.kind === 'sqlite') expect(snapshotDb(opened.db), `seed ${seed}`).toEqual(referenceFile);
    expect(snapshotFiles(dataDir)).toEqual(referenceFiles);
    console.info(
      `crash test on ${stores.kind} (seed ${seed}, reference sync ${Math.round(referenceMs)} ms, ${takeovers} lock takeovers):\n  ${stops.join('\n  ')}`,
    );
  }, 180_000);
});

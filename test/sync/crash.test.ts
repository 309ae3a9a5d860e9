import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityType } from '../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { type CliProcess, startSync } from '../support/cli.js';
import {
  type DbSnapshot,
  halfDumps,
  integrityCheck,
  snapshotDb,
  snapshotFiles,
} from '../support/dbSnapshot.js';
import { syncContext, tempDir } from '../support/harness.js';
import { writeSyntheticFeed } from '../support/syntheticFeed.js';

/**
 * Issue 5, crashes: a real `livefeed sync` process is stopped at random points (SIGKILL, and
 * SIGTERM / SIGINT in follow mode), resumed each time on the same database, and must end exactly
 * where an uninterrupted sync ends. After every stop the database passes `PRAGMA integrity_check`
 * and holds no half-stored dump. Set LIVEFEED_CRASH_SEED to replay a run.
 */

const ENTITIES: EntityType[] = ['area', 'work'];
const FIRST = 800;
const PACKETS = 6;
const KILLS = 4;

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;
let reference: DbSnapshot;
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

function syncedDumps(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM dumps WHERE status = 'SYNCED'").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function lockRows(dbPath: string): unknown[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT pid FROM sync_lock').all();
  } finally {
    db.close();
  }
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
  const ctx = await syncContext({
    feedRoot: feed.feedRoot,
    dataDir: join(work.dir, 'reference'),
    entities: ENTITIES,
  });
  const started = performance.now();
  try {
    expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
  } finally {
    ctx.store.close();
    await ctx.feed.client.close();
  }
  referenceMs = performance.now() - started;
  reference = snapshotDb(join(work.dir, 'reference', 'livefeed.db'));
  referenceFiles = snapshotFiles(join(work.dir, 'reference'));
}, 90_000);

afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

describe('a sync stopped at random points, then resumed, equals an uninterrupted sync', () => {
  it(`survives ${KILLS} kill -9, a SIGTERM and a SIGINT`, async () => {
    const seed = Number(process.env.LIVEFEED_CRASH_SEED ?? Date.now() % 1_000_000);
    const next = random(seed);
    const dataDir = join(work.dir, 'crashed');
    const dbPath = join(dataDir, 'livefeed.db');
    const cli = (...more: string[]): CliProcess =>
      startSync(feed.feedRoot, dataDir, ['--entities', ENTITIES.join(','), '--from', String(FIRST), ...more]);
    const total = PACKETS * ENTITIES.length;
    const stops: string[] = [];
    let takeovers = 0;
    const checkSound = (what: string) => {
      expect(integrityCheck(dbPath), `${what} (seed ${seed})`).toEqual(['ok']);
      expect(halfDumps(dbPath), `${what} (seed ${seed})`).toEqual([]);
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
    expect(lockRows(dbPath)).toEqual([]);
    checkSound('after SIGTERM');
    stops.push(
      `SIGTERM: exited 0 after ${Math.round(termMs)} ms, ${syncedDumps(dbPath)}/${total} dumps stored`,
    );

    // 2. kill -9 at random points of the work left: after a random number of dumps stored by this
    // run, a random moment into the next one (download, verification or its transaction). Every
    // next run finds the dead holder's lock and takes it over.
    const perDumpMs = referenceMs / total;
    for (let round = 1; round <= KILLS; round++) {
      const before = syncedDumps(dbPath);
      const deadHolder = lockRows(dbPath).length > 0;
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
      expect(
        child.events().some((e) => e.event === 'lock-takeover'),
        `round ${round} (seed ${seed})`,
      ).toBe(deadHolder);
      if (deadHolder) takeovers++;
      checkSound(`after kill ${round}`);
      stops.push(
        killed
          ? `kill -9 in run ${round}, ${delay} ms after its dump #${dumps}: ${syncedDumps(dbPath)}/${total} dumps stored`
          : `run ${round} ended before its kill point (exit ${exit.code})`,
      );
    }

    // 3. SIGINT in follow mode at a random moment.
    const interrupted = cli('--poll-interval', '1');
    await interrupted.waitForEvent('sync-start');
    await sleep(Math.round(next() * referenceMs * 0.5));
    interrupted.child.kill('SIGINT');
    expect((await interrupted.exited).code, interrupted.stderr.join('\n')).toBe(0);
    checkSound('after SIGINT');
    stops.push(`SIGINT: ${syncedDumps(dbPath)}/${total} dumps stored`);

    // 4. A last run to the end, then the same database and files as the uninterrupted sync.
    const last = cli('--once');
    expect((await last.exited).code, last.stderr.join('\n')).toBe(0);
    checkSound('at the end');
    expect(snapshotDb(dbPath), `seed ${seed}`).toEqual(reference);
    expect(snapshotFiles(dataDir)).toEqual(referenceFiles);
    console.info(
      `crash test (seed ${seed}, reference sync ${Math.round(referenceMs)} ms, ${takeovers} lock takeovers):\n  ${stops.join('\n  ')}`,
    );
  }, 120_000);
});

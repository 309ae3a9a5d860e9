import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { FeedClient } from '../../src/feed/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext, SyncReport } from '../../src/sync/context.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { createTestKeyHome, signFile, TEST_PUBLIC_KEY_FILE } from './archives.js';
import { type DbSnapshot, integrityCheck, snapshotDb, snapshotFiles } from './dbSnapshot.js';
import { syncContextOn, tempDir, testLogger } from './harness.js';
import { halfDumpsOf, SQLITE_STORES, type StoreKind, snapshotStore, type TestDatabase } from './stores.js';
import { type SyntheticFeed, writeSyntheticFeed } from './syntheticFeed.js';

/**
 * Issue 5, network faults, on both stores (issue 17): a signed synthetic feed behind the sample
 * feed server (which injects the faults), and the database and kept files of an undisturbed sync
 * of it into SQLite to compare every disturbed sync with, whichever store it wrote. Verified in
 * `fail` mode, so a corrupted transfer shows as an INVALID signature or an unreadable archive.
 * Used by test/sync/faults.test.ts and faultRecovery.test.ts.
 */

export const FAULT_ENTITIES: EntityType[] = ['artist', 'label'];
export const FIRST = 500;
/** A JSON dump of the feed, and one of another packet and entity type. */
export const DUMP = jsonDumpPath(501, 'artist');
export const OTHER_DUMP = jsonDumpPath(503, 'label');

/** One sync of the feed into a database of its own (open until the test ends). */
export interface Run {
  reports: SyncReport[];
  logs: string[];
  dataDir: string;
  db: TestDatabase;
  retries: string[];
}

/** A fresh database of a test (closed after it) and its data folder. */
export interface FaultDatabase {
  dataDir: string;
  db: TestDatabase;
}

/** What {@link useFaultFeed} gives a suite once its `beforeAll` ran. */
export interface FaultFeed {
  feed: SampleFeed;
  synthetic: SyntheticFeed;
  /** The undisturbed sync's rows, as both stores give them (test/support/stores.ts snapshotStore). */
  reference: Record<string, unknown>;
  /** A temporary folder removed after the suite. */
  tempDir(prefix: string): Promise<string>;
  /** A new database of `stores` in a new data folder; closed after the test. */
  open(stores: StoreKind, prefix: string): Promise<FaultDatabase>;
  /** A sync context over `on` with the suite's feed and entity types (`verify` default off); its client closed after the test. */
  contextOn(on: FaultDatabase, options?: { verify?: 'fail' | 'off'; logs?: string[] }): Promise<SyncContext>;
  /** Syncs the feed into a fresh database of `stores`, `passes` times (stopping early at a thrown error). */
  runSync(stores: StoreKind, options?: RunOptions): Promise<Run & { error?: unknown }>;
  /** The run's database and kept files equal the undisturbed sync's; nothing half stored. */
  expectSameAsReference(run: FaultDatabase): Promise<void>;
  /** HTTP statuses the feed answered for `path` (under `/musicbrainz/`), in order. */
  statuses(path: string): number[];
  /** The run's JSON log lines of `event`. */
  events(run: Pick<Run, 'logs'>, event: string): Record<string, unknown>[];
}

interface RunOptions {
  passes?: number;
  idleTimeoutMs?: number;
  now?: () => Date;
  verify?: 'fail' | 'off';
}

/** Registers the suite's hooks (feed, reference sync, clean-up, faults cleared after each test). */
export function useFaultFeed(): FaultFeed {
  const cleanups: (() => Promise<void>)[] = [];
  // Closed after each test: a PostgreSQL run's cluster stops with its describe block.
  const afterTest: (() => Promise<void>)[] = [];
  let referenceFiles: Record<string, string>;
  // SQLite only: the file's integrity and search index (rowids are change ids), which snapshotStore leaves out.
  let referenceFile: DbSnapshot;
  const handle = {
    async tempDir(prefix: string) {
      const data = await tempDir(prefix);
      cleanups.push(data.cleanup);
      return data.dir;
    },
    async open(stores: StoreKind, prefix: string) {
      const dataDir = await handle.tempDir(prefix);
      const db = await stores.create(dataDir);
      afterTest.push(() => db.close());
      return { dataDir, db };
    },
    async contextOn(on: FaultDatabase, options: { verify?: 'fail' | 'off'; logs?: string[] } = {}) {
      const logger = testLogger(options.logs);
      const ctx = await syncContextOn(on.db.store, {
        feedRoot: handle.feed!.feedRoot,
        dataDir: on.dataDir,
        entities: FAULT_ENTITIES,
        logger,
        verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, options.verify ?? 'off', logger),
      });
      afterTest.push(() => ctx.feed.client.close());
      return ctx;
    },
    runSync: (stores: StoreKind, options: RunOptions = {}) => runSync(handle as FaultFeed, stores, options),
    async expectSameAsReference(run: FaultDatabase) {
      if (run.db.store.kind === 'sqlite') {
        expect(integrityCheck(run.db.db)).toEqual(['ok']);
        expect(snapshotDb(run.db.db)).toEqual(referenceFile);
      }
      expect(await halfDumpsOf(run.db)).toEqual([]);
      expect(await snapshotStore(run.db)).toEqual(handle.reference);
      expect(snapshotFiles(run.dataDir)).toEqual(referenceFiles);
    },
    statuses: (path: string) =>
      handle.feed!.requests.filter((r) => r.path.endsWith(`/musicbrainz/${path}`)).map((r) => r.status),
    events: (run: Pick<Run, 'logs'>, event: string) =>
      run.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event),
  } as Partial<FaultFeed> & Pick<FaultFeed, 'tempDir' | 'runSync' | 'open'>;

  beforeAll(async () => {
    const root = join(await handle.tempDir('lf-faults-'), 'feed');
    handle.synthetic = await writeSyntheticFeed(root, {
      firstPacket: FIRST,
      packets: 4,
      entities: FAULT_ENTITIES,
      linesPerDump: 400,
      malformedEvery: 97,
      emptyPackets: [502],
      heldHours: true,
    });
    const keys = await createTestKeyHome();
    try {
      for (const file of handle.synthetic.files) await signFile(file.path, keys);
    } finally {
      await keys.close();
    }
    handle.feed = await startSampleFeed({ root });
    const clean = await handle.runSync(SQLITE_STORES);
    try {
      expect(clean.error).toBeUndefined();
      expect(clean.reports[0]!.problems).toEqual([]);
      expect(clean.reports[0]!.quarantined).toBe(6 * 4);
      handle.reference = await snapshotStore(clean.db);
      referenceFile = snapshotDb(clean.db.db);
      referenceFiles = snapshotFiles(clean.dataDir);
      expect(Object.keys(referenceFiles)).toHaveLength(12);
    } finally {
      for (const close of afterTest.splice(0)) await close();
    }
    handle.feed.requests.length = 0;
  }, 60_000);

  afterAll(async () => {
    await handle.feed?.close();
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  afterEach(async () => {
    handle.feed?.faults.clear();
    if (handle.feed) handle.feed.requests.length = 0;
    for (const close of afterTest.splice(0).reverse()) await close();
  });
  return handle as FaultFeed;
}

async function runSync(
  suite: FaultFeed,
  stores: StoreKind,
  options: RunOptions,
): Promise<Run & { error?: unknown }> {
  const { dataDir, db } = await suite.open(stores, 'lf-fault-run-');
  const logs: string[] = [];
  const logger = testLogger(logs);
  const retries: string[] = [];
  const ctx = await syncContextOn(db.store, {
    feedRoot: suite.feed.feedRoot,
    dataDir,
    entities: FAULT_ENTITIES,
    logger,
    verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, options.verify ?? 'fail', logger),
    now: options.now,
  });
  await ctx.feed.client.close();
  ctx.feed.client = new FeedClient({
    feedRoot: suite.feed.feedRoot,
    token: SAMPLE_TOKEN,
    retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
    timeoutMs: 5000,
    idleTimeoutMs: options.idleTimeoutMs ?? 5000,
    onRetry: (info) => retries.push(info.reason),
  });
  const reports: SyncReport[] = [];
  let error: unknown;
  try {
    for (let pass = 0; pass < (options.passes ?? 1); pass++)
      reports.push(await syncOnce(ctx, { from: FIRST }));
  } catch (thrown) {
    error = thrown;
  } finally {
    await ctx.feed.client.close();
  }
  return { reports, logs, dataDir, db, retries, error };
}

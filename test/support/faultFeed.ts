import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { FeedClient } from '../../src/feed/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncReport } from '../../src/sync/context.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { createTestKeyHome, signFile, TEST_PUBLIC_KEY_FILE } from './archives.js';
import { type DbSnapshot, halfDumps, integrityCheck, snapshotDb, snapshotFiles } from './dbSnapshot.js';
import { syncContext, tempDir, testLogger } from './harness.js';
import { type SyntheticFeed, writeSyntheticFeed } from './syntheticFeed.js';

/**
 * Issue 5, network faults: a signed synthetic feed behind the sample feed server (which injects the
 * faults), and the database and kept files of an undisturbed sync of it to compare every disturbed
 * sync with. Verified in `fail` mode, so a corrupted transfer shows as an INVALID signature or an
 * unreadable archive. Used by test/sync/faults.test.ts and faultRecovery.test.ts.
 */

export const FAULT_ENTITIES: EntityType[] = ['artist', 'label'];
export const FIRST = 500;
/** A JSON dump of the feed, and one of another packet and entity type. */
export const DUMP = jsonDumpPath(501, 'artist');
export const OTHER_DUMP = jsonDumpPath(503, 'label');

/** One sync of the feed into its own data folder. */
export interface Run {
  reports: SyncReport[];
  logs: string[];
  dataDir: string;
  dbPath: string;
  retries: string[];
}

/** What {@link useFaultFeed} gives a suite once its `beforeAll` ran. */
export interface FaultFeed {
  feed: SampleFeed;
  synthetic: SyntheticFeed;
  reference: DbSnapshot;
  /** A temporary folder removed after the suite. */
  tempDir(prefix: string): Promise<string>;
  /** Syncs the feed into a fresh data folder, `passes` times (stopping early at a thrown error). */
  runSync(options?: RunOptions): Promise<Run & { error?: unknown }>;
  /** The run's database and kept files equal the undisturbed sync's. */
  expectSameAsReference(run: Pick<Run, 'dataDir' | 'dbPath'>): void;
  /** HTTP statuses the feed answered for `path` (under `/musicbrainz/`), in order. */
  statuses(path: string): number[];
  /** The run's JSON log lines of `event`. */
  events(run: Run, event: string): Record<string, unknown>[];
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
  const handle = {
    async tempDir(prefix: string) {
      const data = await tempDir(prefix);
      cleanups.push(data.cleanup);
      return data.dir;
    },
    runSync: (options: RunOptions = {}) => runSync(handle as FaultFeed, options),
    expectSameAsReference(run: Pick<Run, 'dataDir' | 'dbPath'>) {
      expect(integrityCheck(run.dbPath)).toEqual(['ok']);
      expect(halfDumps(run.dbPath)).toEqual([]);
      expect(snapshotDb(run.dbPath)).toEqual(handle.reference);
      expect(snapshotFiles(run.dataDir)).toEqual(referenceFiles);
    },
    statuses: (path: string) =>
      handle.feed!.requests.filter((r) => r.path.endsWith(`/musicbrainz/${path}`)).map((r) => r.status),
    events: (run: Run, event: string) =>
      run.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event),
  } as Partial<FaultFeed> & Pick<FaultFeed, 'tempDir' | 'runSync'>;
  let referenceFiles: Record<string, string>;

  beforeAll(async () => {
    const root = join(await handle.tempDir('lf-faults-'), 'feed');
    handle.synthetic = await writeSyntheticFeed(root, {
      firstPacket: FIRST,
      packets: 4,
      entities: FAULT_ENTITIES,
      linesPerDump: 400,
      malformedEvery: 97,
      emptyPackets: [502],
    });
    const keys = await createTestKeyHome();
    try {
      for (const file of handle.synthetic.files) await signFile(file.path, keys);
    } finally {
      await keys.close();
    }
    handle.feed = await startSampleFeed({ root });
    const clean = await handle.runSync();
    expect(clean.error).toBeUndefined();
    expect(clean.reports[0]!.problems).toEqual([]);
    expect(clean.reports[0]!.quarantined).toBe(6 * 4);
    handle.reference = snapshotDb(clean.dbPath);
    referenceFiles = snapshotFiles(clean.dataDir);
    expect(Object.keys(referenceFiles)).toHaveLength(12);
    handle.feed.requests.length = 0;
  }, 60_000);

  afterAll(async () => {
    await handle.feed?.close();
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  afterEach(() => {
    handle.feed?.faults.clear();
    if (handle.feed) handle.feed.requests.length = 0;
  });
  return handle as FaultFeed;
}

async function runSync(suite: FaultFeed, options: RunOptions): Promise<Run & { error?: unknown }> {
  const dataDir = await suite.tempDir('lf-fault-run-');
  const logs: string[] = [];
  const logger = testLogger(logs);
  const retries: string[] = [];
  const ctx = await syncContext({
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
    ctx.store.close();
    await ctx.feed.client.close();
  }
  return { reports, logs, dataDir, dbPath: join(dataDir, 'livefeed.db'), retries, error };
}

import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FeedClient } from '../../src/feed/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import { FeedAuthError, FeedNetworkError } from '../../src/feed/errors.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import type { FaultRule } from '../../src/samplefeed/faults.js';
import { SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncReport } from '../../src/sync/context.js';
import { FeedUnavailableError } from '../../src/sync/fileRetry.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { follow, syncOnce } from '../../src/sync/worker.js';
import { createTestKeyHome, signFile, TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import {
  type DbSnapshot,
  halfDumps,
  integrityCheck,
  snapshotDb,
  snapshotFiles,
} from '../support/dbSnapshot.js';
import { gql, syncContext, tempDir, testApp, testLogger } from '../support/harness.js';
import { type SyntheticFeed, writeSyntheticFeed } from '../support/syntheticFeed.js';

/**
 * Issue 5, network faults: a sync through each fault the sample feed injects ends in exactly the
 * database (and kept files) of an undisturbed sync. The feed is signed and verified in `fail` mode,
 * so a corrupted transfer shows as an INVALID signature or an unreadable archive.
 */

const ENTITIES: EntityType[] = ['artist', 'label'];
const FIRST = 500;
const DUMP = jsonDumpPath(501, 'artist');
const OTHER_DUMP = jsonDumpPath(503, 'label');

let work: Awaited<ReturnType<typeof tempDir>>;
let synthetic: SyntheticFeed;
let feed: SampleFeed;
let reference: DbSnapshot;
let referenceFiles: Record<string, string>;
const cleanups: (() => Promise<void>)[] = [];

interface Run {
  reports: SyncReport[];
  logs: string[];
  dataDir: string;
  dbPath: string;
  retries: string[];
}

/** Syncs the feed into a fresh data folder, `passes` times (stopping early at a thrown error). */
async function runSync(
  options: { passes?: number; idleTimeoutMs?: number; now?: () => Date; verify?: 'fail' | 'off' } = {},
): Promise<Run & { error?: unknown }> {
  const data = await tempDir('lf-fault-run-');
  cleanups.push(data.cleanup);
  const logs: string[] = [];
  const logger = testLogger(logs);
  const retries: string[] = [];
  const ctx = await syncContext({
    feedRoot: feed.feedRoot,
    dataDir: data.dir,
    entities: ENTITIES,
    logger,
    verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, options.verify ?? 'fail', logger),
    now: options.now,
  });
  await ctx.feed.client.close();
  ctx.feed.client = new FeedClient({
    feedRoot: feed.feedRoot,
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
  return { reports, logs, dataDir: data.dir, dbPath: join(data.dir, 'livefeed.db'), retries, error };
}

function expectSameAsReference(run: Run): void {
  expect(integrityCheck(run.dbPath)).toEqual(['ok']);
  expect(halfDumps(run.dbPath)).toEqual([]);
  expect(snapshotDb(run.dbPath)).toEqual(reference);
  expect(snapshotFiles(run.dataDir)).toEqual(referenceFiles);
}

const statuses = (path: string) =>
  feed.requests.filter((r) => r.path.endsWith(`/musicbrainz/${path}`)).map((r) => r.status);
const events = (run: Run, event: string) =>
  run.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event);

beforeAll(async () => {
  work = await tempDir('lf-faults-');
  const root = join(work.dir, 'feed');
  synthetic = await writeSyntheticFeed(root, {
    firstPacket: FIRST,
    packets: 4,
    entities: ENTITIES,
    linesPerDump: 400,
    malformedEvery: 97,
    emptyPackets: [502],
  });
  const keys = await createTestKeyHome();
  try {
    for (const file of synthetic.files) await signFile(file.path, keys);
  } finally {
    await keys.close();
  }
  feed = await startSampleFeed({ root });
  const clean = await runSync();
  expect(clean.error).toBeUndefined();
  expect(clean.reports[0]!.problems).toEqual([]);
  expect(clean.reports[0]!.quarantined).toBe(6 * 4);
  reference = snapshotDb(clean.dbPath);
  referenceFiles = snapshotFiles(clean.dataDir);
  expect(Object.keys(referenceFiles)).toHaveLength(12);
  feed.requests.length = 0;
}, 60_000);

afterAll(async () => {
  await feed?.close();
  for (const cleanup of cleanups) await cleanup();
  await work?.cleanup();
});

afterEach(() => {
  feed.faults.clear();
  feed.requests.length = 0;
});

describe('a sync through each network fault equals an undisturbed sync', () => {
  const transient: [string, FaultRule[]][] = [
    ['5xx answers', [{ path: DUMP, fault: { kind: 'status', status: 500 }, times: 2 }]],
    ['502 on a signature', [{ path: `${DUMP}.asc`, fault: { kind: 'status', status: 502 } }]],
    ['429 with Retry-After', [{ path: DUMP, fault: { kind: 'status', status: 429, retryAfter: 0 } }]],
    [
      '503 with Retry-After on replication-info',
      [{ path: 'replication-info', fault: { kind: 'status', status: 503, retryAfter: 0 } }],
    ],
    [
      'connection resets on replication-info',
      [{ path: 'replication-info', fault: { kind: 'reset' }, times: 2 }],
    ],
    ['a connection reset on an archive', [{ path: OTHER_DUMP, fault: { kind: 'reset' } }]],
    ['a slow trickle', [{ path: DUMP, fault: { kind: 'trickle', chunkBytes: 4096, intervalMs: 2 } }]],
  ];
  it.each(transient)('%s', async (_name, rules) => {
    for (const rule of rules) feed.faults.add(rule);
    const run = await runSync();
    expect(run.error).toBeUndefined();
    expect(run.reports[0]!.problems).toEqual([]);
    expect(feed.faults.pending).toBe(0);
    expectSameAsReference(run);
  });

  it('a body cut half way: resumed with a Range request', async () => {
    feed.faults.add({ path: DUMP, fault: { kind: 'cut' } });
    const run = await runSync();
    expect(statuses(DUMP)).toEqual([200, 206]);
    expect(run.retries).toHaveLength(1);
    expectSameAsReference(run);
  });

  it('a stalled body: idle timeout, then resumed', async () => {
    feed.faults.add({ path: DUMP, fault: { kind: 'stall' } });
    const run = await runSync({ idleTimeoutMs: 300 });
    expect(statuses(DUMP)).toEqual([200, 206]);
    expect(run.retries[0]).toMatch(/timeout/i);
    expectSameAsReference(run);
  });

  it('corrupted bytes in an archive: the signature fails, the file is downloaded again', async () => {
    feed.faults.add({ path: DUMP, fault: { kind: 'corrupt' } });
    const run = await runSync();
    expect(statuses(DUMP)).toEqual([200, 200]);
    expect(events(run, 'redownload')).toHaveLength(1);
    expectSameAsReference(run);
  });

  it('corrupted bytes without signature checks: the archive does not decompress, downloaded again', async () => {
    feed.faults.add({ path: DUMP, fault: { kind: 'corrupt' } });
    const run = await runSync({ verify: 'off' });
    expect(run.reports[0]!.problems).toEqual([]);
    const [redownload] = events(run, 'redownload');
    // The decoder's verdict, or (xz program) the stream teardown that can arrive before it.
    expect(redownload).toMatchObject({
      packet: 501,
      file: DUMP,
      err: expect.stringMatching(/corrupt|LZMA|destroyed/i),
    });
    // Same content; only the signature column says UNVERIFIED.
    const snapshot = snapshotDb(run.dbPath);
    for (const table of ['packets', 'dumps', 'changes', 'quarantine', 'events']) {
      expect(snapshot[table], table).toEqual(reference[table]);
    }
    expect(halfDumps(run.dbPath)).toEqual([]);
  });

  it('corrupted bytes in a signature: downloaded again', async () => {
    feed.faults.add({ path: `${DUMP}.asc`, fault: { kind: 'corrupt' } });
    const run = await runSync();
    expect(events(run, 'redownload')).toHaveLength(1);
    expectSameAsReference(run);
  });

  it('a dump that is not there yet (404) is fetched once it appears', async () => {
    feed.faults.add({
      path: DUMP,
      fault: { kind: 'status', status: 404, body: "Can't find specified JSON dump!" },
    });
    // Ten minutes after the packet's TIMESTAMP: a 404 then can mean "not yet" (FEED.md, Errors).
    const start = Date.now();
    const base = Date.parse('2026-05-11T21:24:26Z');
    const run = await runSync({ now: () => new Date(base + Date.now() - start) });
    // Later packets' dumps settle it: asked once more in the same pass, and found.
    expect(statuses(DUMP)).toEqual([404, 200]);
    expectSameAsReference(run);
  });

  it('a file that keeps failing is recorded with attempts and next retry, then recovers', async () => {
    feed.faults.add({ path: DUMP, fault: { kind: 'status', status: 503 }, times: Infinity });
    const failing = await runSync();
    const problems = failing.reports[0]!.problems;
    expect(problems).toEqual([{ packet: 501, file: DUMP, reason: expect.stringContaining('HTTP 503') }]);
    const [logged] = events(failing, 'file-failed');
    expect(logged).toMatchObject({ packet: 501, file: DUMP, attempts: 1, nextRetryAt: expect.any(String) });
    const app = testApp(failing.dbPath, failing.dataDir, { entities: ENTITIES });
    try {
      const answer = await gql(
        app,
        `{ packet(number: 501) { dumps { entity status attempts error nextRetryAt } }
           failures { totalCount nodes { packet kind entity attempts error nextRetryAt } } }`,
      );
      expect(answer.errors).toBeUndefined();
      const artist = answer.data!.packet.dumps.find((d: { entity: string }) => d.entity === 'ARTIST');
      expect(artist).toMatchObject({ status: 'FAILED', attempts: 1, error: expect.stringContaining('503') });
      expect(Date.parse(artist.nextRetryAt)).toBeGreaterThan(Date.now());
      expect(answer.data!.failures).toMatchObject({
        totalCount: 1,
        nodes: [
          { packet: 501, kind: 'JSON_DUMP', entity: 'ARTIST', attempts: 1, nextRetryAt: artist.nextRetryAt },
        ],
      });
    } finally {
      app.store.close();
    }
    // The next pass (the feed healthy again) stores it and ends where a clean sync ends.
    feed.faults.clear();
    const ctx = await syncContext({
      feedRoot: feed.feedRoot,
      dataDir: failing.dataDir,
      entities: ENTITIES,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', testLogger()),
    });
    try {
      expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
    expectSameAsReference(failing);
  });

  it('follow mode leaves a failed file alone until its next retry time', async () => {
    feed.faults.add({ path: DUMP, fault: { kind: 'status', status: 500 }, times: 3 });
    const data = await tempDir('lf-fault-defer-');
    cleanups.push(data.cleanup);
    const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir, entities: ENTITIES });
    try {
      expect((await syncOnce(ctx, { from: FIRST })).problems).toHaveLength(1);
      const deferred = await syncOnce(
        { ...ctx, policy: { ...ctx.policy, deferFailed: true } },
        { from: FIRST },
      );
      expect(deferred).toMatchObject({ problems: [], deferred: 1 });
      expect(statuses(DUMP)).toEqual([500, 500, 500]);
      // sync --once does not wait.
      expect(await syncOnce(ctx, { from: FIRST })).toMatchObject({ problems: [], deferred: 0 });
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
  });

  it('a rejected token stops the sync at once, without retries, storing nothing half', async () => {
    feed.faults.add({ path: DUMP, fault: { kind: 'wrong-token' }, times: Infinity });
    const run = await runSync();
    expect(run.error).toBeInstanceOf(FeedAuthError);
    expect((run.error as Error).message).toMatch(/access token is invalid or revoked \(HTTP 403/);
    expect(statuses(DUMP)).toEqual([403]);
    expect(run.retries).toEqual([]);
    expect(halfDumps(run.dbPath)).toEqual([]);
    expect(integrityCheck(run.dbPath)).toEqual(['ok']);
  });

  it('an outage on replication-info fails the pass; the next pass catches up', async () => {
    feed.faults.add({ path: 'replication-info', fault: { kind: 'reset' }, times: 3 });
    const run = await runSync({ passes: 1 });
    expect(run.error).toBeInstanceOf(FeedNetworkError);
    const again = await runSync({ passes: 1 });
    expect(again.error).toBeUndefined();
    expectSameAsReference(again);
  });

  it('an outage in the middle of a pass ends it after a few files, not after every file', async () => {
    feed.faults.add({ path: /^json-dumps\//, fault: { kind: 'reset' }, times: Infinity });
    const run = await runSync();
    expect(run.error).toBeInstanceOf(FeedUnavailableError);
    expect(events(run, 'file-failed')).toHaveLength(3);
    expect(halfDumps(run.dbPath)).toEqual([]);
  });

  it('follow mode rides out an outage with backoff and catches up', async () => {
    // Every request fails for a while: several passes fail before the feed comes back.
    feed.faults.add({ path: () => true, fault: { kind: 'reset' }, times: 12 });
    const data = await tempDir('lf-fault-follow-');
    cleanups.push(data.cleanup);
    const logs: string[] = [];
    const controller = new AbortController();
    const ctx = await syncContext({
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      entities: ENTITIES,
      logger: testLogger(logs),
      signal: controller.signal,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', testLogger()),
    });
    ctx.observe.onPacketSynced = (packet) => {
      if (packet === synthetic.lastPacket) controller.abort(new Error('caught up'));
    };
    try {
      await follow(ctx, { pollIntervalMs: 20, from: FIRST });
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
    const failedPasses = logs.filter((l) => l.includes('"sync-pass-failed"'));
    expect(failedPasses.length).toBeGreaterThanOrEqual(2);
    expectSameAsReference({
      reports: [],
      logs,
      dataDir: data.dir,
      dbPath: join(data.dir, 'livefeed.db'),
      retries: [],
    });
  });
});

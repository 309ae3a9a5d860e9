import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FeedAuthError, FeedNetworkError } from '../../src/feed/errors.js';
import { FeedUnavailableError } from '../../src/sync/fileRetry.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { follow, syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { halfDumps, integrityCheck } from '../support/dbSnapshot.js';
import { DUMP, FAULT_ENTITIES, FIRST, useFaultFeed } from '../support/faultFeed.js';
import { gql, syncContext, testApp, testLogger } from '../support/harness.js';

/**
 * Issue 5, network faults that last: a file that keeps failing, follow mode's retry times, a
 * rejected token, outages; each run ends as an undisturbed sync does (test/support/faultFeed.ts).
 */
const suite = useFaultFeed();

describe('failures that last, outages and a rejected token', () => {
  it('a file that keeps failing is recorded with attempts and next retry, then recovers', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'status', status: 503 }, times: Infinity });
    const failing = await suite.runSync();
    const problems = failing.reports[0]!.problems;
    expect(problems).toEqual([{ packet: 501, file: DUMP, reason: expect.stringContaining('HTTP 503') }]);
    const [logged] = suite.events(failing, 'file-failed');
    expect(logged).toMatchObject({ packet: 501, file: DUMP, attempts: 1, nextRetryAt: expect.any(String) });
    const app = testApp(failing.dbPath, failing.dataDir, { entities: FAULT_ENTITIES });
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
    suite.feed.faults.clear();
    const ctx = await syncContext({
      feedRoot: suite.feed.feedRoot,
      dataDir: failing.dataDir,
      entities: FAULT_ENTITIES,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', testLogger()),
    });
    try {
      expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
    suite.expectSameAsReference(failing);
  });

  it('follow mode leaves a failed file alone until its next retry time', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'status', status: 500 }, times: 3 });
    const dataDir = await suite.tempDir('lf-fault-defer-');
    const ctx = await syncContext({ feedRoot: suite.feed.feedRoot, dataDir, entities: FAULT_ENTITIES });
    try {
      expect((await syncOnce(ctx, { from: FIRST })).problems).toHaveLength(1);
      const deferred = await syncOnce(
        { ...ctx, policy: { ...ctx.policy, deferFailed: true } },
        { from: FIRST },
      );
      expect(deferred).toMatchObject({ problems: [], deferred: 1 });
      expect(suite.statuses(DUMP)).toEqual([500, 500, 500]);
      // sync --once does not wait.
      expect(await syncOnce(ctx, { from: FIRST })).toMatchObject({ problems: [], deferred: 0 });
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
  });

  it('a rejected token stops the sync at once, without retries, storing nothing half', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'wrong-token' }, times: Infinity });
    const run = await suite.runSync();
    expect(run.error).toBeInstanceOf(FeedAuthError);
    expect((run.error as Error).message).toMatch(/access token is invalid or revoked \(HTTP 403/);
    expect(suite.statuses(DUMP)).toEqual([403]);
    expect(run.retries).toEqual([]);
    expect(halfDumps(run.dbPath)).toEqual([]);
    expect(integrityCheck(run.dbPath)).toEqual(['ok']);
  });

  it('an outage on replication-info fails the pass; the next pass catches up', async () => {
    suite.feed.faults.add({ path: 'replication-info', fault: { kind: 'reset' }, times: 3 });
    const run = await suite.runSync({ passes: 1 });
    expect(run.error).toBeInstanceOf(FeedNetworkError);
    const again = await suite.runSync({ passes: 1 });
    expect(again.error).toBeUndefined();
    suite.expectSameAsReference(again);
  });

  it('an outage in the middle of a pass ends it after a few files, not after every file', async () => {
    suite.feed.faults.add({ path: /^json-dumps\//, fault: { kind: 'reset' }, times: Infinity });
    const run = await suite.runSync();
    expect(run.error).toBeInstanceOf(FeedUnavailableError);
    expect(suite.events(run, 'file-failed')).toHaveLength(3);
    expect(halfDumps(run.dbPath)).toEqual([]);
  });

  it('follow mode rides out an outage with backoff and catches up', async () => {
    // Every request fails for a while: several passes fail before the feed comes back.
    suite.feed.faults.add({ path: () => true, fault: { kind: 'reset' }, times: 12 });
    const dataDir = await suite.tempDir('lf-fault-follow-');
    const logs: string[] = [];
    const controller = new AbortController();
    const ctx = await syncContext({
      feedRoot: suite.feed.feedRoot,
      dataDir,
      entities: FAULT_ENTITIES,
      logger: testLogger(logs),
      signal: controller.signal,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', testLogger()),
    });
    ctx.observe.onPacketSynced = (packet) => {
      if (packet === suite.synthetic.lastPacket) controller.abort(new Error('caught up'));
    };
    try {
      await follow(ctx, { pollIntervalMs: 20, from: FIRST });
    } finally {
      ctx.store.close();
      await ctx.feed.client.close();
    }
    const failedPasses = logs.filter((l) => l.includes('"sync-pass-failed"'));
    expect(failedPasses.length).toBeGreaterThanOrEqual(2);
    suite.expectSameAsReference({ dataDir, dbPath: join(dataDir, 'livefeed.db') });
  });
});

import { expect, it } from 'vitest';
import { FeedAuthError, FeedNetworkError } from '../../src/feed/errors.js';
import { createApp } from '../../src/http/app.js';
import { FeedUnavailableError } from '../../src/sync/fileRetry.js';
import { follow, syncOnce } from '../../src/sync/worker.js';
import { integrityCheck } from '../support/dbSnapshot.js';
import { DUMP, FAULT_ENTITIES, FIRST, useFaultFeed } from '../support/faultFeed.js';
import { gql, testLogger, testService } from '../support/harness.js';
import { describeStores, halfDumpsOf, type TestDatabase } from '../support/stores.js';

/**
 * Issue 5, network faults that last: a file that keeps failing, follow mode's retry times, a
 * rejected token, outages; each run ends as an undisturbed sync does (test/support/faultFeed.ts),
 * on both stores (issue 17).
 */
const suite = useFaultFeed();

/** SQLite only: `PRAGMA integrity_check` of the file (PostgreSQL has no such check of a database). */
function expectSoundFile(db: TestDatabase): void {
  if (db.store.kind === 'sqlite') expect(integrityCheck(db.db)).toEqual(['ok']);
}

describeStores('failures that last, outages and a rejected token', (stores) => {
  it('a file that keeps failing is recorded with attempts and next retry, then recovers', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'status', status: 503 }, times: Infinity });
    const failing = await suite.runSync(stores);
    const problems = failing.reports[0]!.problems;
    expect(problems).toEqual([{ packet: 501, file: DUMP, reason: expect.stringContaining('HTTP 503') }]);
    const [logged] = suite.events(failing, 'file-failed');
    expect(logged).toMatchObject({ packet: 501, file: DUMP, attempts: 1, nextRetryAt: expect.any(String) });
    // What a `serve` over the same database answers (GraphQL over the store's reads).
    const app = createApp({
      reads: failing.db.reads,
      display: failing.db.store.display,
      service: testService({ entities: FAULT_ENTITIES }),
      logger: testLogger(),
      dataDir: failing.dataDir,
    });
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
    // The next pass (the feed healthy again) stores it and ends where a clean sync ends.
    suite.feed.faults.clear();
    const ctx = await suite.contextOn(failing, { verify: 'fail' });
    expect((await syncOnce(ctx, { from: FIRST })).problems).toEqual([]);
    await suite.expectSameAsReference(failing);
  });

  it('follow mode leaves a failed file alone until its next retry time', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'status', status: 500 }, times: 3 });
    const ctx = await suite.contextOn(await suite.open(stores, 'lf-fault-defer-'));
    expect((await syncOnce(ctx, { from: FIRST })).problems).toHaveLength(1);
    const deferred = await syncOnce(
      { ...ctx, policy: { ...ctx.policy, deferFailed: true } },
      { from: FIRST },
    );
    expect(deferred).toMatchObject({ problems: [], deferred: 1 });
    expect(suite.statuses(DUMP)).toEqual([500, 500, 500]);
    // sync --once does not wait.
    expect(await syncOnce(ctx, { from: FIRST })).toMatchObject({ problems: [], deferred: 0 });
  });

  it('a rejected token stops the sync at once, without retries, storing nothing half', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'wrong-token' }, times: Infinity });
    const run = await suite.runSync(stores);
    expect(run.error).toBeInstanceOf(FeedAuthError);
    expect((run.error as Error).message).toMatch(/access token is invalid or revoked \(HTTP 403/);
    expect(suite.statuses(DUMP)).toEqual([403]);
    expect(run.retries).toEqual([]);
    expect(await halfDumpsOf(run.db)).toEqual([]);
    expect(run.db.idle()).toBe(true);
    expectSoundFile(run.db);
  });

  it('an outage on replication-info fails the pass; the next pass catches up', async () => {
    suite.feed.faults.add({ path: 'replication-info', fault: { kind: 'reset' }, times: 3 });
    const run = await suite.runSync(stores, { passes: 1 });
    expect(run.error).toBeInstanceOf(FeedNetworkError);
    const again = await suite.runSync(stores, { passes: 1 });
    expect(again.error).toBeUndefined();
    await suite.expectSameAsReference(again);
  });

  it('an outage in the middle of a pass ends it after a few files, not after every file', async () => {
    suite.feed.faults.add({ path: /^json-dumps\//, fault: { kind: 'reset' }, times: Infinity });
    const run = await suite.runSync(stores);
    expect(run.error).toBeInstanceOf(FeedUnavailableError);
    expect(suite.events(run, 'file-failed')).toHaveLength(3);
    expect(await halfDumpsOf(run.db)).toEqual([]);
    expect(run.db.idle()).toBe(true);
  });

  it('follow mode rides out an outage with backoff and catches up', async () => {
    // Every request fails for a while: several passes fail before the feed comes back.
    suite.feed.faults.add({ path: () => true, fault: { kind: 'reset' }, times: 12 });
    const on = await suite.open(stores, 'lf-fault-follow-');
    const logs: string[] = [];
    const controller = new AbortController();
    const ctx = { ...(await suite.contextOn(on, { verify: 'fail', logs })), signal: controller.signal };
    ctx.observe.onPacketSynced = (packet) => {
      if (packet === suite.synthetic.lastPacket) controller.abort(new Error('caught up'));
    };
    await follow(ctx, { pollIntervalMs: 20, from: FIRST });
    const failedPasses = logs.filter((l) => l.includes('"sync-pass-failed"'));
    expect(failedPasses.length).toBeGreaterThanOrEqual(2);
    await suite.expectSameAsReference(on);
  });
});

/**
 * Read replicas (issue 17, step 9) against a real streaming replica: a hot standby of the
 * throw-away cluster (test/support/postgresStandby.ts), the primary filled by the real sync writer
 * from the bundled feed's archives.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redactDatabaseUrl } from '../../../src/config.js';
import { openPostgresStore, type PostgresStore, postgresPool } from '../../../src/db/postgres/client.js';
import { postgresReads } from '../../../src/db/postgres/reads.js';
import { openPostgresReads, type PostgresReads } from '../../../src/db/postgres/replicaReads.js';
import { ReadRouter, type ReadServer } from '../../../src/db/postgres/replicas.js';
import type { Reads } from '../../../src/db/reads.js';
import { createGraphql, type GraphqlServer } from '../../../src/http/graphql.js';
import { createPacketEvents } from '../../../src/ops/events.js';
import { createMetrics } from '../../../src/ops/metrics.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import { postgresSyncStore } from '../../../src/sync/postgres/syncStore.js';
import { GrowingFeed } from '../../support/growingFeed.js';
import { gql, tempDir, testLogger, testService } from '../../support/harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { type PostgresStandby, startStandby } from '../../support/postgresStandby.js';
import { syncPassOn } from '../../support/synced.js';

const DATABASE = 'replicas';

describePostgres('read replicas: GraphQL reads from a streaming replica, writes on the primary', () => {
  let cluster: PostgresCluster;
  let standby: PostgresStandby;
  let store: PostgresStore;
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let growing: GrowingFeed;
  let feed: SampleFeed;
  let replicated: PostgresReads;
  let primary: Reads;
  let clock = 1_000_000;
  const skips: { display: string; error: Error; skipMs: number }[] = [];

  /** One sync pass into the primary of what the growing feed has published so far. */
  function sync(): Promise<void> {
    return syncPassOn(
      postgresSyncStore(store),
      { feedRoot: feed.feedRoot, dataDir: temp.dir, replicationPackets: true },
      growing.manifest.firstPacket,
    );
  }

  /** The GraphQL endpoint over the replicated reads, one pinned set of reads per request. */
  function graphql(reads: () => Reads): { yoga: GraphqlServer } {
    const yoga = createGraphql({
      reads: replicated.reads,
      // Called by createGraphql's context: every request gets reads of its own.
      readsForRequest: reads,
      display: store.display,
      service: testService(),
      logger: testLogger(),
      metrics: createMetrics({ processMetrics: false }),
      events: createPacketEvents(),
    });
    return { yoga };
  }

  const replicaState = () => replicated.servers().find((s) => s.replica)!;
  const primaryState = () => replicated.servers().find((s) => !s.replica)!;

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase(DATABASE);
    store = await openPostgresStore({ connectionString: url, display: redactDatabaseUrl(url) });
    temp = await tempDir('lf-replicas-');
    growing = new GrowingFeed(join(temp.dir, 'feed'));
    await growing.publishUpTo(growing.manifest.firstPacket + 5);
    feed = await startSampleFeed({ root: growing.root });
    await sync();
    standby = await startStandby(cluster);
    const replicaUrl = standby.urlOf(DATABASE);
    replicated = openPostgresReads(
      store,
      [{ connectionString: replicaUrl, display: redactDatabaseUrl(replicaUrl) }],
      { now: () => clock, onSkip: (event) => skips.push(event), connectTimeoutMs: 2000 },
    );
    primary = postgresReads(store);
  }, 180_000);

  afterAll(async () => {
    await replicated?.close();
    await store?.close();
    await standby?.stop();
    await cluster?.stop();
    await feed?.close();
    await temp?.cleanup();
  });

  it('answers from the replica (a server in recovery) what the primary answers, without asking the primary', async () => {
    const router = new ReadRouter({ pool: store.pool, display: 'primary' }, [
      { pool: postgresPool({ connectionString: standby.urlOf(DATABASE), display: 'replica' }), display: 'r' },
    ]);
    try {
      const { rows } = await router.pool().query('SELECT pg_is_in_recovery() AS recovery');
      expect(rows).toEqual([{ recovery: true }]);
    } finally {
      await router.close();
    }

    const before = primaryState().reads;
    const latest = await replicated.reads.latestPacket();
    expect(latest).toBeDefined();
    expect(latest).toEqual(await primary.latestPacket());
    expect(await replicated.reads.packetsPage(undefined, 50)).toEqual(
      await primary.packetsPage(undefined, 50),
    );
    const query = { first: 500 };
    expect(await replicated.reads.readFeedEvents(query)).toEqual(await primary.readFeedEvents(query));
    expect(await replicated.reads.countFeedEvents({})).toEqual(await primary.countFeedEvents({}));
    expect(replicaState().reads).toBeGreaterThanOrEqual(4);
    expect(primaryState().reads).toBe(before);
  });

  it('never reports a packet the replica has not replayed: latestPacket and the data it covers come from the replica', async () => {
    const old = (await primary.latestPacket())!.number;
    const firstPage = { first: 500 };
    const oldCount = await primary.countFeedEvents({});
    const oldFeed = await primary.readFeedEvents(firstPage);
    await standby.pauseReplay();
    try {
      await growing.publishUpTo(growing.manifest.firstPacket + 9);
      await sync();
      const newer = (await primary.latestPacket())!.number;
      expect(newer).toBeGreaterThan(old);
      const changed = growing.manifest.packets
        .filter((p) => p.number > old && p.number <= newer)
        .flatMap((p) => Object.values(p.jsonDumps).flatMap((dump) => dump.mbids));
      expect(changed.length).toBeGreaterThan(0);

      expect((await replicated.reads.latestPacket())!.number).toBe(old);
      expect(await replicated.reads.readFeedEvents(firstPage)).toEqual(oldFeed);
      // A snapshot (REPEATABLE READ on one connection) is answered by the replica too.
      const seen = await replicated.reads.snapshot((reads) => reads.currentOfMbids(changed));
      const fresh = await primary.currentOfMbids(changed);
      expect(seen.map((row) => row?.packet)).not.toEqual(fresh.map((row) => row?.packet));

      // Through GraphQL: one request, pinned to one server, answers latestPacket, the change
      // stream page and its count all as of what the replica has replayed.
      const primaryBefore = primaryState().reads;
      const yoga = graphql(() => replicated.forRequest());
      const query = '{ latestPacket { number } changeFeed(first: 500) { totalCount nodes { __typename } } }';
      const answer = await gql(yoga, query);
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.latestPacket.number).toBe(old);
      expect(answer.data!.changeFeed.totalCount).toBe(oldCount);
      expect(oldFeed.events.length).toBe(Math.min(oldCount, 500));
      expect(answer.data!.changeFeed.nodes).toHaveLength(oldFeed.events.length);
      expect(primaryState().reads).toBe(primaryBefore);
      const onPrimary = await gql(
        graphql(() => primary),
        query,
      );
      expect(onPrimary.data!.latestPacket.number).toBe(newer);
      expect(onPrimary.data!.changeFeed.totalCount).toBeGreaterThan(oldCount);
    } finally {
      await standby.resumeReplay();
    }
    // Once replayed, the replica answers the primary's writes.
    await standby.waitForReplay();
    const yoga = graphql(() => replicated.forRequest());
    const query =
      '{ latestPacket { number timestamp } changeFeed(first: 500) { totalCount nodes { __typename } } }';
    expect(await gql(yoga, query)).toEqual(
      await gql(
        graphql(() => primary),
        query,
      ),
    );
    expect((await replicated.reads.latestPacket())!.number).toBeGreaterThan(old);
  });

  it('pins each GraphQL request to one server when two replicas have replayed up to different packets', async () => {
    const second = await startStandby(cluster);
    const url = (s: PostgresStandby) => ({
      connectionString: s.urlOf(DATABASE),
      display: `standby ${s.port}`,
    });
    const both = openPostgresReads(store, [url(standby), url(second)]);
    await standby.pauseReplay();
    try {
      const behind = {
        latest: (await primary.latestPacket())!.number,
        count: await primary.countFeedEvents({}),
      };
      await growing.publishUpTo(growing.manifest.firstPacket + 13);
      await sync();
      await second.waitForReplay();
      const ahead = {
        latest: (await primary.latestPacket())!.number,
        count: await primary.countFeedEvents({}),
      };
      expect(ahead.latest).toBeGreaterThan(behind.latest);
      const app = graphql(() => both.forRequest());
      const answers = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const { data, errors } = await gql(
          app,
          '{ latestPacket { number } changeFeed(first: 3) { totalCount } }',
        );
        expect(errors).toBeUndefined();
        // latestPacket and the count come from the same replica: both behind, or both ahead.
        answers.add(
          JSON.stringify({ latest: data!.latestPacket.number, count: data!.changeFeed.totalCount }),
        );
      }
      expect([...answers].sort()).toEqual([JSON.stringify(ahead), JSON.stringify(behind)].sort());
      expect(both.servers().map((s) => s.reads > 0)).toEqual([true, true, false]);
    } finally {
      await standby.resumeReplay();
      await both.close();
      await second.stop();
    }
    await standby.waitForReplay();
  });

  it("reports each replica's replay lag: 0 once it has replayed all, growing while its replay waits", async () => {
    const display = redactDatabaseUrl(standby.urlOf(DATABASE));
    await standby.waitForReplay();
    expect(await replicated.replayLags()).toEqual([{ display, seconds: 0 }]);
    await standby.pauseReplay();
    try {
      await store.pool.query('CREATE TABLE IF NOT EXISTS lag_probe (at text)');
      await store.pool.query('INSERT INTO lag_probe VALUES (now()::text)');
      // Received but not replayed: the lag is the age of the last transaction it replayed.
      const lsn = (await cluster.psql('postgres', 'SELECT pg_current_wal_insert_lsn()')).trim();
      for (let i = 0; i < 200; i++) {
        const got = await standby.psql('postgres', `SELECT pg_last_wal_receive_lsn() >= '${lsn}'::pg_lsn`);
        if (got.trim() === 't') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const [paused] = await replicated.replayLags();
      expect(paused!.display).toBe(display);
      expect(paused!.seconds).toBeGreaterThanOrEqual(1);
    } finally {
      await standby.resumeReplay();
    }
    await standby.waitForReplay();
    expect(await replicated.replayLags()).toEqual([{ display, seconds: 0 }]);
    // The primary is not in recovery: asked as a replica, it has no lag to tell.
    const router = new ReadRouter({ pool: store.pool, display: 'primary' }, [
      { pool: postgresPool({ connectionString: cluster.url, display: 'p' }), display: 'p' },
    ]);
    try {
      expect(await router.replayLags()).toEqual([{ display: 'p', seconds: null }]);
    } finally {
      await router.close();
    }
  });

  it('runs a read that the replica cancels for a conflict with recovery again on the primary; on the last server the conflict is the error', async () => {
    // A replayed ACCESS EXCLUSIVE lock conflicts with a read holding the table on the standby,
    // which cancels the read after max_standby_streaming_delay (set low for this test).
    await standby.psql('postgres', "ALTER SYSTEM SET max_standby_streaming_delay = '100ms'");
    await standby.psql('postgres', 'SELECT pg_reload_conf()');
    await store.pool.query('CREATE TABLE IF NOT EXISTS conflict_probe (n int)');
    await standby.waitForReplay();
    const replicaPool = postgresPool({ connectionString: standby.urlOf(DATABASE), display: 'replica' });
    const router = new ReadRouter({ pool: store.pool, display: 'primary' }, [
      { pool: replicaPool, display: 'replica' },
    ]);
    // Long on the standby only: it is still running when the lock is replayed.
    const read = (server: ReadServer) =>
      server.pool
        .query(
          `SELECT pg_is_in_recovery() AS recovery, pg_sleep(CASE WHEN pg_is_in_recovery() THEN 20 ELSE 0 END)
           FROM (SELECT count(*) FROM conflict_probe) p`,
        )
        .then(({ rows }) => (rows[0] as { recovery: boolean }).recovery);
    /** Takes (and at once releases) the lock on the primary once a read is running on the standby. */
    const lockWhileReading = async () => {
      for (let i = 0; i < 200; i++) {
        const running = await standby.psql(
          DATABASE,
          "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%conflict_probe%' AND pid <> pg_backend_pid()",
        );
        if (running.trim() !== '0') break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await store.pool.query('BEGIN; LOCK TABLE conflict_probe IN ACCESS EXCLUSIVE MODE; COMMIT');
    };
    try {
      const started = Date.now();
      const [answered] = await Promise.all([router.run(router.candidates(), read), lockWhileReading()]);
      expect(answered.server.display).toBe('primary');
      expect(answered.value).toBe(false);
      expect(Date.now() - started).toBeLessThan(15_000);
      // A conflict is no fault of the replica: it is not skipped.
      expect(router.servers().find((s) => s.replica)).toMatchObject({ failures: 0, skippedUntil: undefined });

      await standby.waitForReplay();
      const alone = router.run([router.candidates()[0]!], read);
      const [refused] = await Promise.allSettled([alone, lockWhileReading()]);
      expect(refused.status).toBe('rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: '40001' });
      expect(String((refused as PromiseRejectedResult).reason.message)).toMatch(/conflict with recovery/);
    } finally {
      await router.close();
      await standby.psql('postgres', 'ALTER SYSTEM RESET max_standby_streaming_delay');
      await standby.psql('postgres', 'SELECT pg_reload_conf()');
    }
  }, 60_000);

  it('falls back to the primary when the replica stops, skipping it for a back-off that doubles', async () => {
    await standby.stop();
    const expected = await primary.latestPacket();
    const primaryBefore = primaryState().reads;
    expect(await replicated.reads.latestPacket()).toEqual(expected);
    expect(replicaState()).toMatchObject({ failures: 1, skippedUntil: clock + 1000 });
    expect(primaryState().reads).toBe(primaryBefore + 1);
    expect(skips).toHaveLength(1);
    expect(skips[0]!.display).toBe(redactDatabaseUrl(standby.urlOf(DATABASE)));
    expect(skips[0]!.display).not.toContain(':pw-');
    // A skipped replica is not asked for its lag.
    expect(await replicated.replayLags()).toEqual([{ display: skips[0]!.display, seconds: null }]);

    // Within the back-off the replica is not tried: no second failure.
    const yoga = graphql(() => replicated.forRequest());
    const answer = await gql(yoga, '{ latestPacket { number } changeFeed(first: 5) { totalCount } }');
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.latestPacket.number).toBe(expected!.number);
    expect(replicaState().failures).toBe(1);

    // After it, the next read tries the replica again: it fails again, skipped twice as long.
    clock += 1001;
    expect(await replicated.reads.latestPacket()).toEqual(expected);
    expect(replicaState()).toMatchObject({ failures: 2, skippedUntil: clock + 2000 });
    expect(skips).toHaveLength(2);
    // Past the back-off a stopped replica is asked, fails, and has no lag to tell (no throw).
    clock += 2001;
    expect(await replicated.replayLags()).toEqual([{ display: skips[0]!.display, seconds: null }]);
  });
});

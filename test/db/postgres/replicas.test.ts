/**
 * Read replicas (issue 17, step 9) against a real streaming replica: a hot standby of the
 * throw-away cluster (test/support/replicaCluster.ts), the primary filled by the real sync writer
 * from the bundled feed's archives.
 */
import { expect, it } from 'vitest';
import { redactDatabaseUrl } from '../../../src/config.js';
import { postgresPool } from '../../../src/db/postgres/client.js';
import { openPostgresReads } from '../../../src/db/postgres/replicaReads.js';
import { ReadRouter, type ReadServer } from '../../../src/db/postgres/replicas.js';
import { gql } from '../../support/harness.js';
import { describePostgres } from '../../support/postgres.js';
import { type PostgresStandby, startStandby } from '../../support/postgresStandby.js';
import { useReplicaCluster } from '../../support/replicaCluster.js';

// A test that starts a standby (a base backup) or waits on replay: a minute or more on a loaded
// machine with slow memory (CI on 2026-11-29 ran out of 30 s starting the second standby).
const STANDBY_TIMEOUT_MS = 150_000;

const DATABASE = 'replicas';

describePostgres('read replicas: GraphQL reads from a streaming replica, writes on the primary', () => {
  const r = useReplicaCluster(DATABASE);

  it('answers from the replica (a server in recovery) what the primary answers, without asking the primary', async () => {
    const router = new ReadRouter({ pool: r.store.pool, display: 'primary' }, [
      {
        pool: postgresPool({ connectionString: r.standby.urlOf(DATABASE), display: 'replica' }),
        display: 'r',
      },
    ]);
    try {
      const { rows } = await router.pool().query('SELECT pg_is_in_recovery() AS recovery');
      expect(rows).toEqual([{ recovery: true }]);
    } finally {
      await router.close();
    }

    const before = r.primaryState().reads;
    const latest = await r.replicated.reads.latestPacket();
    expect(latest).toBeDefined();
    expect(latest).toEqual(await r.primary.latestPacket());
    expect(await r.replicated.reads.packetsPage(undefined, 50)).toEqual(
      await r.primary.packetsPage(undefined, 50),
    );
    const query = { first: 500 };
    expect(await r.replicated.reads.readFeedEvents(query)).toEqual(await r.primary.readFeedEvents(query));
    expect(await r.replicated.reads.countFeedEvents({})).toEqual(await r.primary.countFeedEvents({}));
    expect(r.replicaState().reads).toBeGreaterThanOrEqual(4);
    expect(r.primaryState().reads).toBe(before);
  });

  it('never reports a packet the replica has not replayed: latestPacket and the data it covers come from the replica', async () => {
    const old = (await r.primary.latestPacket())!.number;
    const firstPage = { first: 500 };
    const oldCount = await r.primary.countFeedEvents({});
    const oldFeed = await r.primary.readFeedEvents(firstPage);
    await r.standby.pauseReplay();
    try {
      await r.growing.publishUpTo(r.growing.manifest.firstPacket + 9);
      await r.sync();
      const newer = (await r.primary.latestPacket())!.number;
      expect(newer).toBeGreaterThan(old);
      const changed = r.growing.manifest.packets
        .filter((p) => p.number > old && p.number <= newer)
        .flatMap((p) => Object.values(p.jsonDumps).flatMap((dump) => dump.mbids));
      expect(changed.length).toBeGreaterThan(0);

      expect((await r.replicated.reads.latestPacket())!.number).toBe(old);
      expect(await r.replicated.reads.readFeedEvents(firstPage)).toEqual(oldFeed);
      // A snapshot (REPEATABLE READ on one connection) is answered by the replica too.
      const seen = await r.replicated.reads.snapshot((reads) => reads.currentOfMbids(changed));
      const fresh = await r.primary.currentOfMbids(changed);
      expect(seen.map((row) => row?.packet)).not.toEqual(fresh.map((row) => row?.packet));

      // Through GraphQL: one request, pinned to one server, answers latestPacket, the change
      // stream page and its count all as of what the replica has replayed.
      const primaryBefore = r.primaryState().reads;
      const yoga = r.graphql(() => r.replicated.forRequest());
      const query = '{ latestPacket { number } changeFeed(first: 500) { totalCount nodes { __typename } } }';
      const answer = await gql(yoga, query);
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.latestPacket.number).toBe(old);
      expect(answer.data!.changeFeed.totalCount).toBe(oldCount);
      expect(oldFeed.events.length).toBe(Math.min(oldCount, 500));
      expect(answer.data!.changeFeed.nodes).toHaveLength(oldFeed.events.length);
      expect(r.primaryState().reads).toBe(primaryBefore);
      const onPrimary = await gql(
        r.graphql(() => r.primary),
        query,
      );
      expect(onPrimary.data!.latestPacket.number).toBe(newer);
      expect(onPrimary.data!.changeFeed.totalCount).toBeGreaterThan(oldCount);
    } finally {
      await r.standby.resumeReplay();
    }
    // Once replayed, the replica answers the primary's writes.
    await r.standby.waitForReplay();
    const yoga = r.graphql(() => r.replicated.forRequest());
    const query =
      '{ latestPacket { number timestamp } changeFeed(first: 500) { totalCount nodes { __typename } } }';
    expect(await gql(yoga, query)).toEqual(
      await gql(
        r.graphql(() => r.primary),
        query,
      ),
    );
    expect((await r.replicated.reads.latestPacket())!.number).toBeGreaterThan(old);
  });

  it(
    'pins each GraphQL request to one server when two replicas have replayed up to different packets',
    async () => {
      const second = await startStandby(r.cluster);
      const url = (s: PostgresStandby) => ({
        connectionString: s.urlOf(DATABASE),
        display: `standby ${s.port}`,
      });
      const both = openPostgresReads(r.store, [url(r.standby), url(second)]);
      await r.standby.pauseReplay();
      try {
        const behind = {
          latest: (await r.primary.latestPacket())!.number,
          count: await r.primary.countFeedEvents({}),
        };
        await r.growing.publishUpTo(r.growing.manifest.firstPacket + 13);
        await r.sync();
        await second.waitForReplay();
        const ahead = {
          latest: (await r.primary.latestPacket())!.number,
          count: await r.primary.countFeedEvents({}),
        };
        expect(ahead.latest).toBeGreaterThan(behind.latest);
        const app = r.graphql(() => both.forRequest());
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
        await r.standby.resumeReplay();
        await both.close();
        await second.stop();
      }
      await r.standby.waitForReplay();
    },
    STANDBY_TIMEOUT_MS,
  );

  it(
    "reports each replica's replay lag: 0 once it has replayed all, growing while its replay waits",
    async () => {
      const display = redactDatabaseUrl(r.standby.urlOf(DATABASE));
      await r.standby.waitForReplay();
      expect(await r.replicated.replayLags()).toEqual([{ display, seconds: 0 }]);
      await r.standby.pauseReplay();
      try {
        await r.store.pool.query('CREATE TABLE IF NOT EXISTS lag_probe (at text)');
        await r.store.pool.query('INSERT INTO lag_probe VALUES (now()::text)');
        // Received but not replayed: the lag is the age of the last transaction it replayed.
        const lsn = (await r.cluster.psql('postgres', 'SELECT pg_current_wal_insert_lsn()')).trim();
        for (let i = 0; i < 200; i++) {
          const got = await r.standby.psql(
            'postgres',
            `SELECT pg_last_wal_receive_lsn() >= '${lsn}'::pg_lsn`,
          );
          if (got.trim() === 't') break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await new Promise((resolve) => setTimeout(resolve, 1100));
        const [paused] = await r.replicated.replayLags();
        expect(paused!.display).toBe(display);
        expect(paused!.seconds).toBeGreaterThanOrEqual(1);
      } finally {
        await r.standby.resumeReplay();
      }
      await r.standby.waitForReplay();
      expect(await r.replicated.replayLags()).toEqual([{ display, seconds: 0 }]);
      // The primary is not in recovery: asked as a replica, it has no lag to tell.
      const router = new ReadRouter({ pool: r.store.pool, display: 'primary' }, [
        { pool: postgresPool({ connectionString: r.cluster.url, display: 'p' }), display: 'p' },
      ]);
      try {
        expect(await router.replayLags()).toEqual([{ display: 'p', seconds: null }]);
      } finally {
        await router.close();
      }
    },
    STANDBY_TIMEOUT_MS,
  );

  it(
    'runs a read that the replica cancels for a conflict with recovery again on the primary; on the last server the conflict is the error',
    async () => {
      // A replayed ACCESS EXCLUSIVE lock conflicts with a read holding the table on the standby,
      // which cancels the read after max_standby_streaming_delay (set low for this test).
      await r.standby.psql('postgres', "ALTER SYSTEM SET max_standby_streaming_delay = '100ms'");
      await r.standby.psql('postgres', 'SELECT pg_reload_conf()');
      await r.store.pool.query('CREATE TABLE IF NOT EXISTS conflict_probe (n int)');
      await r.standby.waitForReplay();
      const replicaPool = postgresPool({ connectionString: r.standby.urlOf(DATABASE), display: 'replica' });
      const router = new ReadRouter({ pool: r.store.pool, display: 'primary' }, [
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
          const running = await r.standby.psql(
            DATABASE,
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%conflict_probe%' AND pid <> pg_backend_pid()",
          );
          if (running.trim() !== '0') break;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        await r.store.pool.query('BEGIN; LOCK TABLE conflict_probe IN ACCESS EXCLUSIVE MODE; COMMIT');
      };
      try {
        const started = Date.now();
        const [answered] = await Promise.all([router.run(router.candidates(), read), lockWhileReading()]);
        expect(answered.server.display).toBe('primary');
        expect(answered.value).toBe(false);
        expect(Date.now() - started).toBeLessThan(15_000);
        // A conflict is no fault of the replica: it is not skipped.
        expect(router.servers().find((s) => s.replica)).toMatchObject({
          failures: 0,
          skippedUntil: undefined,
        });

        await r.standby.waitForReplay();
        const alone = router.run([router.candidates()[0]!], read);
        const [refused] = await Promise.allSettled([alone, lockWhileReading()]);
        expect(refused.status).toBe('rejected');
        expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: '40001' });
        expect(String((refused as PromiseRejectedResult).reason.message)).toMatch(/conflict with recovery/);
      } finally {
        await router.close();
        await r.standby.psql('postgres', 'ALTER SYSTEM RESET max_standby_streaming_delay');
        await r.standby.psql('postgres', 'SELECT pg_reload_conf()');
      }
    },
    STANDBY_TIMEOUT_MS,
  );

  it('falls back to the primary when the replica stops, skipping it for a back-off that doubles', async () => {
    await r.standby.stop();
    const expected = await r.primary.latestPacket();
    const primaryBefore = r.primaryState().reads;
    expect(await r.replicated.reads.latestPacket()).toEqual(expected);
    expect(r.replicaState()).toMatchObject({ failures: 1, skippedUntil: r.clock + 1000 });
    expect(r.primaryState().reads).toBe(primaryBefore + 1);
    expect(r.skips).toHaveLength(1);
    expect(r.skips[0]!.display).toBe(redactDatabaseUrl(r.standby.urlOf(DATABASE)));
    expect(r.skips[0]!.display).not.toContain(':pw-');
    // A skipped replica is not asked for its lag.
    expect(await r.replicated.replayLags()).toEqual([{ display: r.skips[0]!.display, seconds: null }]);

    // Within the back-off the replica is not tried: no second failure.
    const yoga = r.graphql(() => r.replicated.forRequest());
    const answer = await gql(yoga, '{ latestPacket { number } changeFeed(first: 5) { totalCount } }');
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.latestPacket.number).toBe(expected!.number);
    expect(r.replicaState().failures).toBe(1);

    // After it, the next read tries the replica again: it fails again, skipped twice as long.
    r.clock += 1001;
    expect(await r.replicated.reads.latestPacket()).toEqual(expected);
    expect(r.replicaState()).toMatchObject({ failures: 2, skippedUntil: r.clock + 2000 });
    expect(r.skips).toHaveLength(2);
    // Past the back-off a stopped replica is asked, fails, and has no lag to tell (no throw).
    r.clock += 2001;
    expect(await r.replicated.replayLags()).toEqual([{ display: r.skips[0]!.display, seconds: null }]);
  });
});

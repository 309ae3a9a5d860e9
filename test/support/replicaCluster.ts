/**
 * A throw-away PostgreSQL cluster with a streaming replica (test/support/postgresStandby.ts) for the
 * read replica tests (issue 17, step 9): the primary filled by the real sync writer from a growing
 * copy of the bundled feed, the replicated reads opened over it with a clock the tests move.
 */
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { redactDatabaseUrl } from '../../src/config.js';
import { openPostgresStore, type PostgresStore } from '../../src/db/postgres/client.js';
import { postgresReads } from '../../src/db/postgres/reads.js';
import { openPostgresReads, type PostgresReads } from '../../src/db/postgres/replicaReads.js';
import type { ReadServerState } from '../../src/db/postgres/replicas.js';
import type { Reads } from '../../src/db/reads.js';
import { createGraphql, type GraphqlServer } from '../../src/http/graphql.js';
import { createPacketEvents } from '../../src/ops/events.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { postgresSyncStore } from '../../src/sync/postgres/syncStore.js';
import { GrowingFeed } from './growingFeed.js';
import { tempDir, testLogger, testService } from './harness.js';
import { type PostgresCluster, startPostgres } from './postgres.js';
import { type PostgresStandby, startStandby } from './postgresStandby.js';
import { syncPassOn } from './synced.js';

/** What {@link useReplicaCluster} sets up; the fields are filled in by its `beforeAll`. */
export interface ReplicaCluster {
  cluster: PostgresCluster;
  standby: PostgresStandby;
  /** The primary's store, written by {@link ReplicaCluster.sync}. */
  store: PostgresStore;
  temp: Awaited<ReturnType<typeof tempDir>>;
  growing: GrowingFeed;
  feed: SampleFeed;
  /** Reads over the primary and the replica, as `serve --db-replica` opens them. */
  replicated: PostgresReads;
  /** Reads of the primary alone. */
  primary: Reads;
  /** The replicated reads' clock in ms: tests move it to pass a back-off. */
  clock: number;
  /** Each replica skipped by the replicated reads, as their `onSkip` told it. */
  skips: { display: string; error: Error; skipMs: number }[];
  /** One sync pass into the primary of what the growing feed has published so far. */
  sync(): Promise<void>;
  /** The GraphQL endpoint over the replicated reads, `reads()` giving each request its own. */
  graphql(reads: () => Reads): { yoga: GraphqlServer };
  /** The replicated reads' state of the replica and of the primary. */
  replicaState(): ReadServerState;
  primaryState(): ReadServerState;
}

/**
 * Registers the cluster's `beforeAll` (six packets synced, then the standby started) and `afterAll`
 * in the calling `describe`, and returns the fixture they fill in. `database`: its name on both.
 */
export function useReplicaCluster(database: string): ReplicaCluster {
  const r = { clock: 1_000_000, skips: [] } as unknown as ReplicaCluster;
  r.sync = () =>
    syncPassOn(
      postgresSyncStore(r.store),
      { feedRoot: r.feed.feedRoot, dataDir: r.temp.dir, replicationPackets: true },
      r.growing.manifest.firstPacket,
    );
  r.graphql = (reads) => ({
    yoga: createGraphql({
      reads: r.replicated.reads,
      // Called by createGraphql's context: every request gets reads of its own.
      readsForRequest: reads,
      display: r.store.display,
      service: testService(),
      logger: testLogger(),
      metrics: createMetrics({ processMetrics: false }),
      events: createPacketEvents(),
    }),
  });
  r.replicaState = () => r.replicated.servers().find((s) => s.replica)!;
  r.primaryState = () => r.replicated.servers().find((s) => !s.replica)!;

  beforeAll(async () => {
    r.cluster = await startPostgres();
    const { url } = await r.cluster.createDatabase(database);
    r.store = await openPostgresStore({ connectionString: url, display: redactDatabaseUrl(url) });
    r.temp = await tempDir('lf-replicas-');
    r.growing = new GrowingFeed(join(r.temp.dir, 'feed'));
    await r.growing.publishUpTo(r.growing.manifest.firstPacket + 5);
    r.feed = await startSampleFeed({ root: r.growing.root });
    await r.sync();
    r.standby = await startStandby(r.cluster);
    const replicaUrl = r.standby.urlOf(database);
    r.replicated = openPostgresReads(
      r.store,
      [{ connectionString: replicaUrl, display: redactDatabaseUrl(replicaUrl) }],
      { now: () => r.clock, onSkip: (event) => r.skips.push(event), connectTimeoutMs: 2000 },
    );
    r.primary = postgresReads(r.store);
  }, 180_000);

  afterAll(async () => {
    await r.replicated?.close();
    await r.store?.close();
    await r.standby?.stop();
    await r.cluster?.stop();
    await r.feed?.close();
    await r.temp?.cleanup();
  });
  return r;
}

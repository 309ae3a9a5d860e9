import { afterAll, beforeAll, expect, it } from 'vitest';
import { changeId } from '../../../src/db/keys.js';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { PRUNE_STATEMENTS } from '../../../src/sync/postgres/prune.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { explainPlan, readPaths } from '../../support/postgresPlans.js';

// A pruning batch touches one page of ids and the MBIDs on it, never a whole table: each read of
// `changes` and `row_changes` must be an index read (sequential scans off, so that the plan of a
// test table is the plan of a large one).
describePostgres('the plans of the PostgreSQL pruning (indexes only)', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  const scans = readPaths;

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('prune_plans');
    store = await openPostgresStore({ connectionString: url, display: 'prune_plans' });
    // 20 packets of the same 2,000 artists, and 20,000 row changes.
    for (let packet = 1; packet <= 20; packet++) {
      await store.pool.query(
        `INSERT INTO changes (id, packet, entity, position, mbid, data)
         SELECT $1::bigint + n, $2, 'artist', n, 'a0000000-0000-4000-8000-' || lpad(n::text, 12, '0'), '{}'
         FROM generate_series(0, 1999) n`,
        [changeId(packet, 'artist', 0), packet],
      );
    }
    await store.pool.query(
      `INSERT INTO row_changes (packet, ord, seqid, xid, table_name, op)
       SELECT 1 + n / 1000, n % 1000, n, n, 'musicbrainz.artist', 'u' FROM generate_series(0, 19999) n`,
    );
    await store.pool.query('ANALYZE changes; ANALYZE row_changes');
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('a batch of changes reads the id range and each MBID newest line through indexes', async () => {
    const plan = await explainPlan(store, PRUNE_STATEMENTS.PRUNE_CHANGES_SQL, [-1, changeId(15, 'area', 0)]);
    expect(scans(plan)).toEqual(['changes_mbid', 'changes_pkey']);
  });

  it('a batch of row changes reads the primary key', async () => {
    const plan = await explainPlan(store, PRUNE_STATEMENTS.PRUNE_ROW_CHANGES_SQL, [15]);
    expect(scans(plan)).toEqual(['row_changes_packet_ord_pk']);
  });
});

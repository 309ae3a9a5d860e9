import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  changesWhere,
  feedCountSql,
  removalPageSql,
  removalsWhere,
} from '../../../src/db/changeFeedQueries.js';
import type { FeedWindow } from '../../../src/db/feedWindow.js';
import { dumpIdRange } from '../../../src/db/keys.js';
import { anyList, changePageSql } from '../../../src/db/postgres/changeFeedReads.js';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { pgSql } from '../../../src/db/postgres/sql.js';
import { rowChangeCountSql, rowChangesPageSql } from '../../../src/db/replicationQueries.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { explainPlan, relationScans, sortNodes } from '../../support/postgresPlans.js';

// The pages of the change stream and of a packet's row changes read through indexes, in their
// order: no Sort node (which would read every row of the range), no scan of the whole table.
// Sequential scans are off, so that the plan of a test table is the plan of a large one.
describePostgres('the plans of the PostgreSQL change stream and row change reads', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  const plan = ({ sql, params }: { sql: string; params: unknown[] }) =>
    explainPlan(store, pgSql(sql), params);
  const scans = relationScans;
  const sorts = sortNodes;
  const window: FeedWindow = { lower: { at: 'packetEnd', packet: 100 }, bound: 101 };

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('feedplans');
    store = await openPostgresStore({ connectionString: url, display: 'feedplans' });
    // Two packets of 50,000 artist lines, 500 removals, a packet of 100,000 row changes over ten
    // tables; analysed, so that the planner sees statistics like a real table's.
    for (const packet of [100, 101]) {
      await store.pool.query(
        `INSERT INTO changes (id, packet, entity, position, mbid, data)
         SELECT $1::bigint + n, $2, 'artist', n, 'a0000000-0000-4000-8000-' || lpad((n % 30000)::text, 12, '0'), '{}'
         FROM generate_series(1, 50000) n`,
        [dumpIdRange(packet, 'artist')[0], packet],
      );
    }
    await store.pool.query(
      `INSERT INTO removals (mbid, entity, packet, kind)
       SELECT 'a0000000-0000-4000-8000-' || lpad(n::text, 12, '0'), 'artist', 101, 'DELETED' FROM generate_series(1, 500) n`,
    );
    await store.pool.query(
      `INSERT INTO row_changes (packet, ord, seqid, xid, table_name, op, keys, new_data)
       SELECT 101, n, n, n / 10, 'musicbrainz.t' || (n % 10), 'i', jsonb_build_object('id', n), '{}'::jsonb
       FROM generate_series(0, 99999) n`,
    );
    await store.pool.query('ANALYZE changes; ANALYZE removals; ANALYZE row_changes');
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  const page = (where: { sql: string; params: unknown[] }, sql: string) => ({
    sql,
    params: [...where.params, 101],
  });

  it("the stream's changes: a range of the primary key in id order; for MBIDs, their versions by changes_mbid", async () => {
    for (const filters of [{}, { entities: ['artist' as const] }]) {
      const where = changesWhere(window, filters, anyList);
      const nodes = await plan(page(where, changePageSql(where.sql)));
      expect(scans(nodes)).toEqual(['changes:changes_pkey', 'packets:packets_pkey']);
      expect(sorts(nodes)).toEqual([]);
    }
    // A list of MBIDs reads only their versions (a few each), sorted: not every line of the range.
    const where = changesWhere(window, { mbids: ['a0000000-0000-4000-8000-000000000007'] }, anyList);
    const nodes = await plan(page(where, changePageSql(where.sql)));
    expect(nodes.flatMap((n) => n['Index Name'] ?? [])).toEqual(['changes_mbid', 'packets_pkey']);
  });

  it("the stream's removals: a seek on the primary key in its order", async () => {
    const where = removalsWhere(window, {}, anyList);
    const nodes = await plan(page(where, removalPageSql(where.sql, 'LIMIT ?')));
    expect(scans(nodes)).toEqual([
      'removals:removals_packet_mbid_kind_pk',
      'replication_packets:replication_packets_pkey',
    ]);
    expect(sorts(nodes)).toEqual([]);
    const counts = feedCountSql(window, {}, anyList);
    expect(scans(await plan(counts.removals))).toEqual(['removals:removals_packet_mbid_kind_pk']);
  });

  it("a packet's row changes: the primary key in apply order, or row_changes_table for a table", async () => {
    const all = rowChangesPageSql(101, {}, 5000, 'LIMIT ?');
    const allPlan = await plan({ sql: all.sql, params: [...all.params, 50] });
    expect(scans(allPlan)).toEqual(['row_changes:row_changes_packet_ord_pk']);
    expect(sorts(allPlan)).toEqual([]);
    const one = rowChangesPageSql(101, { table: 'musicbrainz.t3', op: 'i' }, 5000, 'LIMIT ?');
    const onePlan = await plan({ sql: one.sql, params: [...one.params, 50] });
    expect(scans(onePlan)).toEqual(['row_changes:row_changes_table']);
    expect(sorts(onePlan)).toEqual([]);
    const count = rowChangeCountSql(101, { table: 'musicbrainz.t3' });
    expect((await plan(count)).flatMap((n) => n['Index Name'] ?? [])).toEqual(['row_changes_table']);
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { dumpIdRange } from '../../../src/db/keys.js';
import { DUMP_PAGE, MBID_PAGE, PREVIOUS } from '../../../src/db/postgres/changeReads.js';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { CURRENT_OF } from '../../../src/db/postgres/currentReads.js';
import { REMOVAL_STATEMENTS } from '../../../src/db/postgres/removalReads.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { explainPlan, type PlanNode, relationScans, sortNodes } from '../../support/postgresPlans.js';

const HEAVY = 'b0000000-0000-4000-8000-000000000001';

// The reads by MBID and by dump must be seeks on the indexes, in the index's order: a Sort node
// means every version of an MBID is read and sorted (an index on mbid alone), a scan of another
// index or of the table means reading rows the answer does not need. Sequential scans are turned
// off, so that the plan of a test table is the plan of a large one.
describePostgres('the plans of the PostgreSQL reads (indexes, no sort)', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  const plan = (statement: { text: string }, values: unknown[]) => explainPlan(store, statement.text, values);
  const scans = relationScans;
  const indexes = (plan: PlanNode[]) => plan.flatMap((n) => (n['Index Name'] ? [n['Index Name']] : []));
  const sorts = sortNodes;

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('plans');
    store = await openPostgresStore({ connectionString: url, display: 'plans' });
    // A JSON dump of 100,000 lines: every 500th a version of one MBID (HEAVY, 200 versions), the
    // others about three versions each of 30,000 MBIDs; removals; analysed, so that the planner
    // sees statistics like a real table's. HEAVY is the case the index is for: a page of 20 of its
    // versions must not read all 200 and sort them.
    const [first] = dumpIdRange(100, 'artist');
    await store.pool.query(
      `INSERT INTO changes (id, packet, entity, position, mbid, data)
       SELECT $1::bigint + n, 100, 'artist', n,
         CASE WHEN n % 500 = 0 THEN $2 ELSE 'a0000000-0000-4000-8000-' || lpad((n % 30000)::text, 12, '0') END, '{}'
       FROM generate_series(1, 100000) n`,
      [first, HEAVY],
    );
    await store.pool.query(
      `INSERT INTO removals (mbid, entity, packet, kind)
       SELECT 'a0000000-0000-4000-8000-' || lpad(n::text, 12, '0'), 'artist', 101, 'DELETED' FROM generate_series(1, 500) n`,
    );
    await store.pool.query('ANALYZE changes; ANALYZE removals');
  });
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('the current state of a list of MBIDs: one seek in changes_mbid and one in removals_mbid per MBID', async () => {
    const current = await plan(CURRENT_OF, [[HEAVY, 'a0000000-0000-4000-8000-000000000001']]);
    expect(scans(current).sort()).toEqual(['changes:changes_mbid', 'removals:removals_mbid']);
    expect(sorts(current)).toEqual([]);
  });

  it('history pages and the previous version: changes_mbid, and for an MBID of many versions no sort', async () => {
    const [first] = dumpIdRange(100, 'artist');
    const typical = 'a0000000-0000-4000-8000-000000000007';
    const cases = [
      [MBID_PAGE, [HEAVY, 0, 20]],
      [MBID_PAGE, [HEAVY, first + 50_000, 20]],
      [PREVIOUS, [HEAVY, first + 50_000]],
      [MBID_PAGE, [typical, 0, 20]],
      [PREVIOUS, [typical, first + 90_000]],
    ] as const;
    const found = [];
    for (const [statement, values] of cases) {
      const nodes = await plan(statement, [...values]);
      found.push({ name: statement.name, indexes: indexes(nodes), sorted: sorts(nodes).length > 0 });
    }
    // A typical MBID's three versions may be sorted after the seek (the planner's choice: cheap).
    expect(found.map((f, i) => (i < 3 ? f : { ...f, sorted: false }))).toEqual(
      cases.map(([statement]) => ({ name: statement.name, indexes: ['changes_mbid'], sorted: false })),
    );
  });

  it("a JSON dump's page: a range of the primary key, in id order", async () => {
    const [first, last] = dumpIdRange(100, 'artist');
    const found = await plan(DUMP_PAGE, [first + 5000, last, 50]);
    expect(scans(found)).toEqual(['changes:changes_pkey']);
    expect(sorts(found)).toEqual([]);
  });

  it('removal pages: the primary key (or removals_entity with a type) from the cursor on, no sort; an MBID: removals_mbid', async () => {
    const key = [101, 'a0000000-0000-4000-8000-000000000250', 'DELETED'];
    const all = { from: 1, to: 200 };
    const artists = { ...all, entity: 'artist' as const };
    const pages = [
      await plan(REMOVAL_STATEMENTS.page(all), [1, 200, ...key, 21]),
      await plan(REMOVAL_STATEMENTS.page(artists), [1, 200, 'artist', ...key, 21]),
    ];
    expect(pages.map(scans)).toEqual([
      ['removals:removals_packet_mbid_kind_pk', 'replication_packets:replication_packets_pkey'],
      ['removals:removals_entity', 'replication_packets:replication_packets_pkey'],
    ]);
    expect(pages.flatMap(sorts)).toEqual([]);
    const ofMbid = await plan(REMOVAL_STATEMENTS.ofMbid, [key[1]]);
    expect(scans(ofMbid)).toEqual(['removals:removals_mbid', 'replication_packets:replication_packets_pkey']);
    expect(sorts(ofMbid)).toEqual([]);
  });
});

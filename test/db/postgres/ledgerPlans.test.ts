import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { FAILURES_PAGE, PACKETS_PAGE, quarantineStatements } from '../../../src/db/postgres/ledgerReads.js';
import { STATUS_SQL } from '../../../src/db/statusQueries.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { explainPlan, type PlanNode, relationScans } from '../../support/postgresPlans.js';

// The paged ledger reads must read through indexes: packets and the quarantine in the primary
// key's order (no Sort: a page does not read the whole table), failures through the status
// indexes (their Sort orders the failed files only). Sequential scans are off, so that the plan on
// these tables is the plan on large ones; the keys from cursors are bigint (the CASTs of the
// shared statements) and must not keep the index from bounding the scan.
describePostgres('the plans of the PostgreSQL ledger reads (indexes)', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  const plan = (statement: { text: string }, values: unknown[]) => explainPlan(store, statement.text, values);
  const scans = (nodes: PlanNode[]) => relationScans(nodes).sort();
  const sorted = (nodes: PlanNode[]) => nodes.some((n) => n['Node Type'] === 'Sort');
  /** The index conditions: the cursor's key must bound the scan, not filter every row before it. */
  const conditions = (nodes: PlanNode[]) =>
    nodes.flatMap((n) => (n as PlanNode & { 'Index Cond'?: string })['Index Cond'] ?? []);

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('ledger_plans');
    store = await openPostgresStore({ connectionString: url, display: 'ledger_plans' });
    // 50,000 packets, each with a SYNCED dump (two in three with changes); every 1,000th a FAILED one and a PENDING
    // replication packet; 20,000 quarantined lines over 20 packets and two entity types.
    await store.pool.query(`
      INSERT INTO packets (number, created_at) SELECT n, 'x' FROM generate_series(1, 50000) n;
      INSERT INTO dumps (packet, entity, status, change_count, updated_at)
        SELECT n, 'artist', CASE WHEN n % 1000 = 0 THEN 'FAILED' ELSE 'SYNCED' END, n % 3, 'x' FROM generate_series(1, 50000) n;
      INSERT INTO replication_packets (packet, status, updated_at)
        SELECT n, CASE WHEN n % 1000 = 0 THEN 'PENDING' ELSE 'SYNCED' END, 'x' FROM generate_series(1, 50000) n;
      INSERT INTO quarantine (packet, entity, line, raw, reason)
        SELECT 100 + n / 1000, CASE WHEN n % 2 = 0 THEN 'area' ELSE 'release-group' END, n, 'x', 'y'
        FROM generate_series(1, 20000) n;
      ANALYZE packets; ANALYZE dumps; ANALYZE replication_packets; ANALYZE quarantine;
    `);
  });
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('a page of packets: the primary key backwards from the cursor, no sort', async () => {
    for (const before of [Number.MAX_SAFE_INTEGER, 25_000]) {
      const nodes = await plan(PACKETS_PAGE, [before, 21]);
      expect(scans(nodes)).toEqual(['packets:packets_pkey']);
      expect(conditions(nodes)).toEqual([expect.stringContaining('number <')]);
      expect(sorted(nodes)).toBe(false);
    }
  });

  it('a page of the quarantine, whatever the filter: the primary key from the cursor, no sort', async () => {
    const filters = [
      {},
      { packet: 105 },
      { entity: 'area' as const },
      { packet: 105, entity: 'area' as const },
    ];
    for (const filter of filters) {
      const statements = quarantineStatements(filter);
      const nodes = await plan(statements.page, [...statements.params, 105, 'area', 5000, 21]);
      expect(scans(nodes), JSON.stringify(filter)).toEqual(['quarantine:quarantine_packet_entity_line_pk']);
      expect(sorted(nodes), JSON.stringify(filter)).toBe(false);
      expect(conditions(nodes), JSON.stringify(filter)).toEqual([
        expect.stringContaining('ROW(packet, entity, line) >'),
      ]);
    }
  });

  it("GraphiQL's example, the newest dumps with changes: the packets' primary key backwards against the dumps' primary key, no sort", async () => {
    const nodes = await plan({ text: STATUS_SQL.newestDumpsWithChanges }, []);
    expect([...new Set(scans(nodes))].sort()).toEqual([
      'dumps:dumps_packet_entity_pk',
      'packets:packets_pkey',
    ]);
    expect(sorted(nodes)).toBe(false);
    expect(nodes.find((n) => n['Relation Name'] === 'packets')).toMatchObject({
      'Scan Direction': 'Backward',
    });
  });

  it('a page of failures: the status indexes of dumps and replication packets', async () => {
    const nodes = await plan(FAILURES_PAGE, [20_000, '', 21]);
    expect(scans(nodes)).toEqual(['dumps:dumps_status', 'replication_packets:replication_packets_status']);
  });
});

import type { PostgresStore } from '../../src/db/postgres/client.js';

/** One node of a PostgreSQL `EXPLAIN (FORMAT JSON)` plan, as far as the plan tests read it. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan tree, depth first. */
export const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

/**
 * The plan of `text` with `values`, every node depth first, on a connection of its own with
 * sequential scans off, so that the plan on a small test table is the plan on a large one (the
 * connection is dropped afterwards, setting and all).
 */
export async function explainPlan(
  store: PostgresStore,
  text: string,
  values: unknown[],
): Promise<PlanNode[]> {
  const client = await store.pool.connect();
  try {
    await client.query('SET enable_seqscan = off');
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (FORMAT JSON) ${text}`,
      values,
    );
    return planNodes(rows[0]!['QUERY PLAN'][0].Plan);
  } finally {
    client.release(true);
  }
}

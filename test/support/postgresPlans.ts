import type { PostgresStore } from '../../src/db/postgres/client.js';

/** One node of a PostgreSQL `EXPLAIN (FORMAT JSON)` plan, as far as the plan tests read it. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** `<relation>:<index name, else node type>` of each node that reads a relation, in plan order. */
export const relationScans = (plan: PlanNode[]): string[] =>
  plan
    .filter((n) => n['Relation Name'])
    .map((n) => `${n['Relation Name']}:${n['Index Name'] ?? n['Node Type']}`);

/** The indexes a plan reads and the relations it scans whole (`<relation>:Seq Scan`), each once, sorted. */
export const readPaths = (plan: PlanNode[]): string[] =>
  [
    ...new Set(
      plan.flatMap((n) => {
        if (n['Index Name']) return [n['Index Name']];
        return n['Node Type'] === 'Seq Scan' ? [`${n['Relation Name']}:Seq Scan`] : [];
      }),
    ),
  ].sort();

/** The Sort nodes of a plan (a page read in index order has none). */
export const sortNodes = (plan: PlanNode[]): PlanNode[] => plan.filter((n) => n['Node Type'] === 'Sort');

/** Every node of a plan tree, depth first. */
export const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

/**
 * The plan of `text` with `values`, every node depth first, on a connection of its own with
 * sequential scans off, so that the plan on a small test table is the plan on a large one (the
 * connection is dropped afterwards, setting and all). `before` runs first on that connection (a
 * TEMP table the statement reads).
 */
export async function explainPlan(
  store: PostgresStore,
  text: string,
  values: unknown[],
  before?: string,
): Promise<PlanNode[]> {
  const client = await store.pool.connect();
  try {
    await client.query('SET enable_seqscan = off');
    if (before) await client.query(before);
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (FORMAT JSON) ${text}`,
      values,
    );
    return planNodes(rows[0]!['QUERY PLAN'][0].Plan);
  } finally {
    client.release(true);
  }
}

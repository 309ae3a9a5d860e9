import { expect } from 'vitest';
import type { GraphqlApp } from './appStores.js';
import { type GqlResult, gql } from './harness.js';
import type { ManifestRowChange } from './manifest.js';

/** Readers of `rowChanges` over GraphQL (test/graphql/types/{replication,rowChanges}.test.ts). */

const OP = { i: 'INSERT', u: 'UPDATE', d: 'DELETE' } as const;
const ROW_FIELDS = 'packet seqid xid table op keys oldData newData timestamp';
// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are walked field by field
export type Node = Record<string, any>;

/** Every row change of a packet, paging with `first` (checks cursors and pageInfo on the way). */
export async function allRows(
  app: Pick<GraphqlApp, 'yoga'>,
  packet: number,
  first = 500,
  filter = '',
): Promise<Node[]> {
  const rows: Node[] = [];
  let after: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const answer: GqlResult = await gql(
      app,
      `query($p: Int!, $first: Int, $after: String) { rowChanges(packet: $p, first: $first, after: $after${filter}) {
        totalCount pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node { ${ROW_FIELDS} } } } }`,
      { p: packet, first, after },
    );
    expect(answer.errors).toBeUndefined();
    const connection: Node = answer.data!.rowChanges;
    expect(connection.pageInfo.hasPreviousPage).toBe(after !== null);
    expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)?.cursor ?? null);
    rows.push(...connection.edges.map((edge: Node) => edge.node));
    expect(rows.length).toBeLessThanOrEqual(connection.totalCount);
    if (!connection.pageInfo.hasNextPage) {
      expect(rows).toHaveLength(connection.totalCount);
      return rows;
    }
    after = connection.pageInfo.endCursor;
  }
  throw new Error('rowChanges never ended');
}

/** A manifest row as production (v2) answers it. */
export function v2Answer(packet: number, row: ManifestRowChange): Node {
  return { packet, ...row, op: OP[row.op] };
}

import { afterAll, beforeAll, expect, it } from 'vitest';
import { gql, testApp } from '../support/harness.js';
import { type SyncedDatabase, syncedDatabase } from '../support/synced.js';

/**
 * Every Relay connection (graphql/connection.ts `resolvePage`) with `first: 0`: no item, but
 * `hasNextPage` says whether any follows and `endCursor` reads on from where the page started (the
 * `after` given); a page past the last item keeps its `after` as endCursor too.
 */

let synced: SyncedDatabase;
let app: ReturnType<typeof testApp>;
beforeAll(async () => {
  synced = await syncedDatabase();
  app = testApp(synced.dbPath, synced.dir);
});
afterAll(async () => {
  app.store.close();
  await synced.cleanup();
});

const PACKETS = `query($first: Int, $after: String) {
  packets(first: $first, after: $after) { totalCount nodes { number } pageInfo { hasNextPage endCursor } }
}`;
type Packets = {
  totalCount: number;
  nodes: { number: number }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
};
const packets = async (variables: Record<string, unknown>) => {
  const answer = await gql(app, PACKETS, variables);
  expect(answer.errors).toBeUndefined();
  return answer.data!.packets as Packets;
};

it('first: 0 says whether items follow and reads on from where it started', async () => {
  const zero = await packets({ first: 0 });
  expect(zero.nodes).toEqual([]);
  expect(zero.totalCount).toBeGreaterThan(3);
  expect(zero.pageInfo).toEqual({ hasNextPage: true, endCursor: null });
  const two = await packets({ first: 2 });
  const mid = two.pageInfo.endCursor!;
  expect(await packets({ first: 0, after: mid })).toMatchObject({
    nodes: [],
    pageInfo: { hasNextPage: true, endCursor: mid },
  });
  const next = await packets({ first: 2, after: mid });
  expect(next.nodes.map((n) => n.number)).toEqual(
    (await packets({ first: 4 })).nodes.slice(2).map((n) => n.number),
  );
});

it('a page past the last item keeps its after as endCursor', async () => {
  const all = await packets({ first: 500 });
  const end = all.pageInfo.endCursor!;
  expect(all.pageInfo.hasNextPage).toBe(false);
  expect(await packets({ first: 5, after: end })).toMatchObject({
    nodes: [],
    pageInfo: { hasNextPage: false, endCursor: end },
  });
  expect((await packets({ first: 0, after: end })).pageInfo).toEqual({ hasNextPage: false, endCursor: end });
});

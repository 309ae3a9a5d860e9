import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { describeAppStores } from '../../support/appStores.js';
import { type GqlResult, gql } from '../../support/harness.js';
import { mbidOf, recordingLineOf, storeDump } from '../../support/sizedLines.js';

/** Issue 16: Entity.history is a connection, oldest first, a page at a time. */

const X = mbidOf(1);
const Y = mbidOf(2);

/** 45 versions of X over three packets, stored out of packet order; Y in between. */
async function build(writer: SyncStore, dir: string): Promise<void> {
  const feed = join(dir, 'feed');
  await storeDump(
    writer,
    feed,
    12,
    'recording',
    [...Array(20)].map(() => recordingLineOf(X, 2000)),
  );
  await storeDump(writer, feed, 10, 'recording', [
    ...[...Array(15)].map(() => recordingLineOf(X, 2000)),
    recordingLineOf(Y, 2000),
    ...[...Array(10)].map(() => recordingLineOf(X, 2000)),
  ]);
  await storeDump(writer, feed, 11, 'recording', [recordingLineOf(Y, 2000)]);
}

const HISTORY = `query($m: ID!, $first: Int, $after: String) { entity(mbid: $m) { history(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { cursor node { packet position } } } } }`;

describeAppStores('Entity.history(first, after)', build, (_kind, run) => {
  const history = (m: string, first?: number, after?: string | null): Promise<GqlResult> =>
    gql(run().app, HISTORY, { m, first, after });

  it('pages through every version, oldest first, with cursors and bounds', async () => {
    const stored = await run().db.rows(
      'SELECT packet, position FROM changes WHERE mbid = ? ORDER BY packet, position',
      X,
    );
    expect(stored).toHaveLength(45);
    const first = await history(X);
    expect(first.errors).toBeUndefined();
    const conn = first.data!.entity.history;
    expect(conn.totalCount).toBe(45);
    expect(conn.edges.map((e: { node: unknown }) => e.node)).toEqual(stored.slice(0, 20));
    expect(conn.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(conn.pageInfo.endCursor).toBe(conn.edges.at(-1).cursor);

    const walked: unknown[] = [];
    let after: string | null = null;
    for (let pages = 1; ; pages++) {
      const page: GqlResult = await history(X, 7, after);
      expect(page.errors).toBeUndefined();
      const c = page.data!.entity.history;
      expect(c.pageInfo.hasPreviousPage).toBe(after !== null);
      walked.push(...c.edges.map((e: { node: unknown }) => e.node));
      if (!c.pageInfo.hasNextPage) {
        expect(pages).toBe(7);
        break;
      }
      after = c.pageInfo.endCursor;
    }
    expect(walked).toEqual(stored);
    const none = await history(X, 0);
    expect(none.data!.entity.history.edges).toEqual([]);
    expect(none.data!.entity.history.totalCount).toBe(45);
    const all = await history(X, 500);
    expect(all.data!.entity.history.edges).toHaveLength(45);
    expect(all.data!.entity.history.pageInfo.hasNextPage).toBe(false);
  });

  it('refuses a cursor of another history or connection, and page sizes out of bounds', async () => {
    const ofY = (await history(Y, 1)).data!.entity.history.pageInfo.endCursor;
    const code = (r: GqlResult) => r.errors?.[0]?.extensions?.code;
    expect(code(await history(X, 5, ofY))).toBe('BAD_CURSOR');
    // A real cursor of `removals()` (packets 1 to the largest, every entity type).
    const removals = Buffer.from(`removal/1/2097151/*:10:${X}:DELETED`).toString('base64url');
    expect(code(await history(X, 5, removals))).toBe('BAD_CURSOR');
    expect(code(await history(X, 5, 'bm9wZQ'))).toBe('BAD_CURSOR');
    expect(code(await history(X, 501))).toBe('PAGE_SIZE_EXCEEDED');
    expect(code(await history(X, -1))).toBe('BAD_USER_INPUT');
    // The cursor of Y's first version goes on with Y's second.
    const next = await history(Y, 5, ofY);
    expect(next.data!.entity.history.edges.map((e: { node: { packet: number } }) => e.node.packet)).toEqual([
      11,
    ]);
  });
});

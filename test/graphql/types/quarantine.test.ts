import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { EntityType } from '../../../src/feed/entities.js';
import { startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncReport } from '../../../src/sync/context.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { describeAppStores } from '../../support/appStores.js';
import { type GqlResult, gql, syncContextOn } from '../../support/harness.js';
import { writeSyntheticFeed } from '../../support/syntheticFeed.js';

/** Issue 5, bad input: quarantined lines are counted by the sync and listed by GraphQL, on both stores. */

const ENTITIES: EntityType[] = ['area', 'work'];
/** The sync report of each store's run. */
const reports = new Map<SyncStore['kind'], SyncReport>();

/** 40 lines per dump, every 10th malformed: 4 per dump, 16 in all; synced by the store's writer. */
async function build(writer: SyncStore, dir: string): Promise<void> {
  await writeSyntheticFeed(join(dir, 'feed'), {
    firstPacket: 300,
    packets: 2,
    entities: ENTITIES,
    linesPerDump: 40,
    malformedEvery: 10,
  });
  const feed = await startSampleFeed({ root: join(dir, 'feed') });
  const ctx = await syncContextOn(writer, { feedRoot: feed.feedRoot, dataDir: dir, entities: ENTITIES });
  try {
    reports.set(writer.kind, await syncOnce(ctx, { from: 300 }));
  } finally {
    await ctx.feed.client.close();
    await feed.close();
  }
}

const PAGE = `query($first: Int, $after: String, $packet: Int, $entity: EntityType) {
  quarantine(first: $first, after: $after, packet: $packet, entity: $entity) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { packet entity line raw reason }
  }
}`;

describeAppStores(
  'quarantine',
  build,
  (kind, run) => {
    it('is counted by the sync report and each dump', async () => {
      expect(reports.get(kind)!.quarantined).toBe(16);
      expect(reports.get(kind)!.problems).toEqual([]);
      const answer = await gql(
        run().app,
        '{ packet(number: 300) { dumps { entity changeCount quarantineCount } } }',
      );
      const dumps = answer.data!.packet.dumps.filter((d: { entity: string }) =>
        ['AREA', 'WORK'].includes(d.entity),
      );
      expect(dumps).toEqual([
        { entity: 'AREA', changeCount: 36, quarantineCount: 4 },
        { entity: 'WORK', changeCount: 36, quarantineCount: 4 },
      ]);
    });

    it('lists every quarantined line with packet, entity, line, raw text and reason, page by page', async () => {
      const seen: { packet: number; entity: string; line: number; raw: string; reason: string }[] = [];
      let after: string | null = null;
      for (let page = 0; page < 10; page++) {
        const answer: GqlResult = await gql(run().app, PAGE, { first: 5, after });
        expect(answer.errors).toBeUndefined();
        const connection: {
          totalCount: number;
          pageInfo: { hasNextPage: boolean; endCursor: string };
          nodes: typeof seen;
        } = answer.data!.quarantine;
        expect(connection.totalCount).toBe(16);
        seen.push(...connection.nodes);
        if (!connection.pageInfo.hasNextPage) break;
        after = connection.pageInfo.endCursor;
      }
      expect(seen).toHaveLength(16);
      expect(seen[0]).toEqual({
        packet: 300,
        entity: 'AREA',
        line: 10,
        raw: '{"id": "broken line 10"',
        reason: expect.stringMatching(/^not JSON/),
      });
      expect(seen[1]).toMatchObject({
        packet: 300,
        entity: 'AREA',
        line: 20,
        raw: '{"name": "no id on line 20"}',
        reason: 'no "id"',
      });
      const keys = seen.map((q) => `${q.packet}/${q.entity}/${String(q.line).padStart(3, '0')}`);
      expect(keys).toEqual([...keys].sort());
    });

    it('filters by packet and entity type', async () => {
      const answer = await gql(run().app, PAGE, { packet: 301, entity: 'WORK', first: 100 });
      expect(answer.data!.quarantine.totalCount).toBe(4);
      expect(answer.data!.quarantine.nodes.map((q: { line: number }) => q.line)).toEqual([10, 20, 30, 40]);
    });
  },
  { service: { entities: ENTITIES } },
);

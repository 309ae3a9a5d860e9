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

    it('a cursor holds only under its own packet and entity filters; there it goes on, nothing twice', async () => {
      const ask = (variables: Record<string, unknown>) => gql(run().app, PAGE, variables);
      const code = (answer: GqlResult) => answer.errors?.[0]?.extensions?.code;
      const unfiltered = (await ask({ first: 2 })).data!.quarantine.pageInfo.endCursor as string;
      const of300 = (await ask({ packet: 300, first: 2 })).data!.quarantine.pageInfo.endCursor as string;
      const ofArea = (await ask({ entity: 'AREA', first: 2 })).data!.quarantine.pageInfo.endCursor as string;
      for (const [after, filters] of [
        [unfiltered, [{ packet: 300 }, { entity: 'AREA' }, { packet: 300, entity: 'AREA' }]],
        [of300, [{}, { packet: 301 }, { packet: 300, entity: 'AREA' }, { entity: 'AREA' }]],
        [ofArea, [{}, { packet: 300 }, { entity: 'WORK' }, { packet: 300, entity: 'AREA' }]],
      ] as const) {
        for (const filter of filters) {
          const answer = await ask({ ...filter, after });
          expect(code(answer), JSON.stringify(filter)).toBe('BAD_CURSOR');
          expect(answer.errors?.[0]?.message).toContain('is not a cursor of this connection');
        }
      }
      // Packet 300 holds 8 lines (two dumps of 4): pages of 3 from its own cursors, each line once.
      const whole = (await ask({ packet: 300, first: 100 })).data!.quarantine.nodes;
      expect(whole).toHaveLength(8);
      const walked: unknown[] = [];
      let after: string | null = null;
      for (let page = 0; page < 5; page++) {
        const answer: GqlResult = await ask({ packet: 300, first: 3, after });
        expect(answer.errors).toBeUndefined();
        walked.push(...answer.data!.quarantine.nodes);
        if (!answer.data!.quarantine.pageInfo.hasNextPage) break;
        after = answer.data!.quarantine.pageInfo.endCursor;
      }
      expect(walked).toEqual(whole);
    });
  },
  { service: { entities: ENTITIES } },
);

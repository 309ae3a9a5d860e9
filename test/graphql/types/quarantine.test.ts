import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityType } from '../../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncReport } from '../../../src/sync/context.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { type GqlResult, gql, syncContext, tempDir, testApp } from '../../support/harness.js';
import { writeSyntheticFeed } from '../../support/syntheticFeed.js';

/** Issue 5, bad input: quarantined lines are counted by the sync and listed by GraphQL. */

const ENTITIES: EntityType[] = ['area', 'work'];
let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;
let report: SyncReport;
let app: ReturnType<typeof testApp>;

beforeAll(async () => {
  work = await tempDir('lf-quarantine-');
  // 40 lines per dump, every 10th malformed: 4 per dump, 16 in all.
  await writeSyntheticFeed(join(work.dir, 'feed'), {
    firstPacket: 300,
    packets: 2,
    entities: ENTITIES,
    linesPerDump: 40,
    malformedEvery: 10,
  });
  feed = await startSampleFeed({ root: join(work.dir, 'feed') });
  const dataDir = join(work.dir, 'data');
  const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir, entities: ENTITIES });
  try {
    report = await syncOnce(ctx, { from: 300 });
  } finally {
    ctx.store.close();
    await ctx.feed.client.close();
  }
  app = testApp(join(dataDir, 'livefeed.db'), dataDir, { entities: ENTITIES });
}, 60_000);

afterAll(async () => {
  app?.store.close();
  await feed?.close();
  await work?.cleanup();
});

const PAGE = `query($first: Int, $after: String, $packet: Int, $entity: EntityType) {
  quarantine(first: $first, after: $after, packet: $packet, entity: $entity) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { packet entity line raw reason }
  }
}`;

describe('quarantine', () => {
  it('is counted by the sync report and each dump', async () => {
    expect(report.quarantined).toBe(16);
    expect(report.problems).toEqual([]);
    const answer = await gql(app, '{ packet(number: 300) { dumps { entity changeCount quarantineCount } } }');
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
      const answer: GqlResult = await gql(app, PAGE, { first: 5, after });
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
    const answer = await gql(app, PAGE, { packet: 301, entity: 'WORK', first: 100 });
    expect(answer.data!.quarantine.totalCount).toBe(4);
    expect(answer.data!.quarantine.nodes.map((q: { line: number }) => q.line)).toEqual([10, 20, 30, 40]);
  });
});

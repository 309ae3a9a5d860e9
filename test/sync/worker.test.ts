import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITY_TYPES } from '../../src/feed/entities.js';
import { FeedAuthError } from '../../src/feed/errors.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContext, tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';

const manifest = readBundledManifest();

describe('sync of the bundled feed into a real SQLite file', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let ctx: Awaited<ReturnType<typeof syncContext>>;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir });
  });
  afterAll(async () => {
    ctx.store.close();
    await ctx.feed.client.close();
    await feed.close();
    await data.cleanup();
  });

  it('starts at latest - 23 on an empty database and stores every dump as the manifest says', async () => {
    const report = await syncOnce(ctx);
    expect(report).toMatchObject({
      latest: manifest.lastPacket,
      from: manifest.lastPacket - 23,
      to: manifest.lastPacket,
      problems: [],
    });
    expect(report.completed).toHaveLength(24);
    for (const packet of manifest.packets) {
      for (const entity of ENTITY_TYPES) {
        const expected = packet.jsonDumps[entity];
        const dump = ctx.store.sqlite
          .prepare('SELECT status, change_count AS n FROM dumps WHERE packet = ? AND entity = ?')
          .get(packet.number, entity) as { status: string; n: number };
        expect(dump, `${packet.number} ${entity}`).toEqual(
          expected ? { status: 'SYNCED', n: expected.mbids.length } : { status: 'NO_CHANGES', n: 0 },
        );
        if (!expected) continue;
        const rows = ctx.store.sqlite
          .prepare('SELECT mbid, position FROM changes WHERE packet = ? AND entity = ? ORDER BY id')
          .all(packet.number, entity) as { mbid: string; position: number }[];
        expect(rows.map((r) => r.mbid)).toEqual(expected.mbids);
        expect(rows.map((r) => r.position)).toEqual(expected.mbids.map((_, i) => i + 1));
        const file = ctx.store.sqlite
          .prepare('SELECT size, sha256, signature FROM feed_files WHERE name = ?')
          .get(expected.file);
        expect(file).toEqual({ size: expected.bytes, sha256: expected.sha256, signature: 'UNVERIFIED' });
      }
    }
  });

  it('stores each line unchanged', async () => {
    const row = ctx.store.sqlite.prepare('SELECT data FROM changes LIMIT 1').get() as { data: string };
    const packet = manifest.packets.find((p) => Object.keys(p.jsonDumps).length > 0)!;
    expect(JSON.parse(row.data).id).toMatch(/^[0-9a-f-]{36}$/);
    expect(packet).toBeDefined();
  });

  it('a second sync fetches no dump again and adds nothing', async () => {
    const before = ctx.store.sqlite.prepare('SELECT count(*) AS n, sum(id) AS s FROM changes').get();
    const requestsBefore = feed.requests.length;
    const report = await syncOnce(ctx, { from: manifest.firstPacket });
    expect(report.problems).toEqual([]);
    expect(report.dumpsStored).toBe(0);
    expect(feed.requests.slice(requestsBefore).map((r) => r.path)).toEqual([
      '/api/musicbrainz/replication-info',
    ]);
    expect(ctx.store.sqlite.prepare('SELECT count(*) AS n, sum(id) AS s FROM changes').get()).toEqual(before);
  });
});

describe('token problems stop the sync at once', () => {
  let feed: SampleFeed;
  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  });
  afterAll(() => feed.close());

  it('403: names the token problem without printing the token', async () => {
    const data = await tempDir();
    const wrong = 'WrongTokenWrongTokenWrongTokenWrongToken';
    const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir, token: wrong });
    const error = await syncOnce(ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FeedAuthError);
    expect((error as FeedAuthError).status).toBe(403);
    expect((error as Error).message).toMatch(/token is invalid/);
    expect((error as Error).message).not.toContain(wrong);
    expect((error as Error).message).toContain('token=***');
    ctx.store.close();
    await data.cleanup();
  });

  it('400 when no token is sent', async () => {
    const data = await tempDir();
    const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: data.dir, token: '' });
    const error = await syncOnce(ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FeedAuthError);
    expect((error as FeedAuthError).status).toBe(400);
    expect((error as Error).message).toMatch(/no access token/);
    ctx.store.close();
    await data.cleanup();
  });
});

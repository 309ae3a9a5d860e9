import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITY_TYPES } from '../../src/feed/entities.js';
import { FeedAuthError } from '../../src/feed/errors.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { syncContext, syncContextOn, tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

const manifest = readBundledManifest();

/** The lines of a JSON dump's `mbdump/<entity>` member, read by the real tar and xz. */
async function jsonDumpLines(archive: string, entity: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)('tar', ['-xJOf', archive, `mbdump/${entity}`], {
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout.split('\n').filter((line) => line !== '');
}

describeStores('sync of the bundled feed into a real database', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let ctx: SyncContext;
  const changeSums = 'SELECT count(*) AS n, sum(id) AS s FROM changes';

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    ctx = await syncContextOn(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir });
  });
  afterAll(async () => {
    await ctx?.feed.client.close();
    await db?.close();
    await feed?.close();
    await data?.cleanup();
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
        const [dump] = await db.rows(
          'SELECT status, change_count AS n FROM dumps WHERE packet = ? AND entity = ?',
          packet.number,
          entity,
        );
        expect(dump, `${packet.number} ${entity}`).toEqual(
          expected ? { status: 'SYNCED', n: expected.mbids.length } : { status: 'NO_CHANGES', n: 0 },
        );
        if (!expected) continue;
        const rows = await db.rows<{ mbid: string; position: number }>(
          'SELECT mbid, position FROM changes WHERE packet = ? AND entity = ? ORDER BY id',
          packet.number,
          entity,
        );
        expect(rows.map((r) => r.mbid)).toEqual(expected.mbids);
        expect(rows.map((r) => r.position)).toEqual(expected.mbids.map((_, i) => i + 1));
        const file = await db.rows(
          'SELECT size, sha256, signature FROM feed_files WHERE name = ?',
          expected.file,
        );
        expect(file).toEqual([{ size: expected.bytes, sha256: expected.sha256, signature: 'UNVERIFIED' }]);
      }
    }
  });

  it('stores each line unchanged', async () => {
    const packet = manifest.packets.find((p) => Object.keys(p.jsonDumps).length > 0)!;
    const [entity, dump] = Object.entries(packet.jsonDumps)[0]!;
    const rows = await db.rows<{ data: string }>(
      'SELECT data FROM changes WHERE packet = ? AND entity = ? ORDER BY position',
      packet.number,
      entity,
    );
    // The archive's lines, byte for byte, in file order.
    const lines = await jsonDumpLines(join(BUNDLED_FEED_ROOT, dump.file), entity);
    expect(rows.map((r) => r.data)).toEqual(lines);
    expect(lines.map((l) => JSON.parse(l).id)).toEqual(dump.mbids);
  });

  it('a second sync fetches no dump again and adds nothing', async () => {
    const before = await db.rows(changeSums);
    const requestsBefore = feed.requests.length;
    const report = await syncOnce(ctx, { from: manifest.firstPacket });
    expect(report.problems).toEqual([]);
    expect(report.dumpsStored).toBe(0);
    expect(feed.requests.slice(requestsBefore).map((r) => r.path)).toEqual([
      '/api/musicbrainz/replication-info',
    ]);
    expect(await db.rows(changeSums)).toEqual(before);
  });
});

// The token is refused before anything is written: no store is read, so SQLite alone.
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

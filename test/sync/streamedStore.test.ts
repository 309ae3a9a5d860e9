import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityType } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { Prefetcher } from '../../src/sync/prefetch.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { syncContext, syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { type SignedDump, signedDumpFeed } from '../support/signedDumpFeed.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

/**
 * Issue 16, "overlap the stages": a JSON dump is stored while it downloads and its signature is
 * checked, and committed only once the signature verified; the next dumps download while one is
 * stored (prefetch), committed in file order. The store's part runs on both stores (issue 17).
 */

const FIRST = 500;
const PACKETS = [FIRST, FIRST + 1, FIRST + 2];
const ENTITIES: EntityType[] = ['area', 'artist'];
/** Packet FIRST's artist dump: big, signed over other bytes (a well-formed signature that never matches). */
const BAD = jsonDumpPath(FIRST, 'artist');
/** Packet FIRST + 1's area dump: a prefetched file whose signature does not match either. */
const BAD_PREFETCHED = jsonDumpPath(FIRST + 1, 'area');
const BIG_LINES = 8_000;

const mbid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** A line of about 300 bytes that xz cannot shrink much. */
const bigLine = (n: number) =>
  JSON.stringify({ id: mbid(n), name: `E${n}`, noise: randomBytes(120).toString('hex') });

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;

beforeAll(async () => {
  let n = 1;
  const dumps = PACKETS.flatMap((packet) =>
    ENTITIES.map((entity): SignedDump => {
      const name = jsonDumpPath(packet, entity);
      const lines =
        name === BAD
          ? Array.from({ length: BIG_LINES }, () => bigLine(n++))
          : [JSON.stringify({ id: mbid(n++) })];
      return {
        packet,
        entity,
        lines,
        signature: name === BAD || name === BAD_PREFETCHED ? 'other bytes' : 'good',
      };
    }),
  );
  ({ feed, work } = await signedDumpFeed('lf-streamed-', dumps));
}, 120_000);
afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

/** The count of `changes` of (packet, entity) as another connection of the database sees it. */
interface Watcher {
  count(packet: number, entity: string): Promise<number>;
  close(): Promise<void>;
}

/** A connection of its own, as a `serve` reading the database has: a read-only SQLite one, or a `pg.Client`. */
async function watcherOf(db: TestDatabase): Promise<Watcher> {
  const sql = 'SELECT count(*) AS n FROM changes WHERE packet = $1 AND entity = $2';
  if (db.store.kind === 'sqlite') {
    const reader = new Database(db.db, { readonly: true });
    const visible = reader.prepare(sql.replace(/\$\d/g, '?'));
    return {
      count: async (packet, entity) => (visible.get(packet, entity) as { n: number }).n,
      close: async () => {
        reader.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: db.db });
  await client.connect();
  return {
    count: async (packet, entity) => Number((await client.query(sql, [packet, entity])).rows[0].n),
    close: () => client.end(),
  };
}

/**
 * `feed_files` names in the order their rows were committed: SQLite's rowid; PostgreSQL's inserting
 * transaction id (`xmin`): the writer commits one dump's transaction after the other.
 */
function inCommitOrder(db: TestDatabase): Promise<{ name: string }[]> {
  const order = db.store.kind === 'sqlite' ? 'rowid' : 'xmin::text::bigint';
  return db.rows(`SELECT name FROM feed_files ORDER BY ${order}`);
}

describeStores('streamed store', (stores) => {
  it('a big dump with a bad signature leaves nothing visible, at any time, and is recorded FAILED; the other dumps are stored in file order', async () => {
    const logger = testLogger();
    const dataDir = join(work.dir, `data-${stores.kind}`);
    const db = await stores.create(dataDir);
    const ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir,
      entities: ENTITIES,
      logger,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    });
    // Another connection, as the GraphQL server has, watches while the sync stores the dump.
    const watcher = await watcherOf(db);
    let seen = 0;
    let watching = true;
    let reads = 0;
    const watch = (async () => {
      while (watching) {
        seen = Math.max(seen, await watcher.count(FIRST, 'artist'));
        reads++;
        await sleep(5);
      }
    })();
    try {
      const report = await syncOnce(ctx, { from: FIRST, to: FIRST + 2 });
      watching = false;
      await watch;
      expect(reads).toBeGreaterThan(0);
      expect(seen).toBe(0);
      expect(await watcher.count(FIRST, 'artist')).toBe(0);
      expect(report.problems.map((p) => [p.file, p.reason])).toEqual([
        [BAD, `signature of ${BAD} is INVALID: file does not match signature`],
        [BAD_PREFETCHED, `signature of ${BAD_PREFETCHED} is INVALID: file does not match signature`],
      ]);
      const failed = await db.rows(
        "SELECT packet, entity, error FROM dumps WHERE status = 'FAILED' ORDER BY packet, entity",
      );
      expect(failed).toEqual([
        {
          packet: FIRST,
          entity: 'artist',
          error: `signature of ${BAD} is INVALID: file does not match signature`,
        },
        {
          packet: FIRST + 1,
          entity: 'area',
          error: `signature of ${BAD_PREFETCHED} is INVALID: file does not match signature`,
        },
      ]);
      // Not kept, not recorded, no download left behind.
      expect(existsSync(join(dataDir, 'files', BAD))).toBe(false);
      // feed_files rows are inserted at each COMMIT: their order is the order of commits.
      const files = (await inCommitOrder(db)).map((f) => f.name);
      const stored = PACKETS.flatMap((p) => ENTITIES.map((e) => jsonDumpPath(p, e))).filter(
        (name) => name !== BAD && name !== BAD_PREFETCHED,
      );
      expect(files).toEqual(stored);
      for (const name of stored) expect(existsSync(join(dataDir, 'files', name))).toBe(true);
      expect(await db.rows('SELECT count(*) AS n FROM changes')).toEqual([{ n: stored.length }]);
      expect(db.idle()).toBe(true);
    } finally {
      watching = false;
      await watch;
      await watcher.close();
      await ctx.feed.client.close();
      await db.close();
    }
  }, 120_000);
});

// The prefetcher downloads files and reads no store: SQLite alone.
describe('prefetch', () => {
  it('a sync with replication packets takes every file it prefetched: each archive and each signature asked for once', async () => {
    const bundled = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    const dir = await tempDir('lf-prefetch-all-');
    const ctx = await syncContext({
      feedRoot: bundled.feedRoot,
      dataDir: dir.dir,
      replicationPackets: true,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', testLogger()),
    });
    try {
      const report = await syncOnce(ctx);
      expect(report.problems).toEqual([]);
      // Files served (a 404 is asked again by design: a dump stays PENDING until a later one shows).
      const paths = bundled.requests
        .filter((r) => r.status === 200)
        .map((r) => r.path.replace('/api/musicbrainz/', ''));
      const archives = paths.filter((path) => /\.tar\.(xz|bz2)$/.test(path));
      expect(archives.some((path) => path.startsWith('replication-'))).toBe(true);
      expect(archives.filter((path) => path.startsWith('json-dumps/')).length).toBeGreaterThan(2);
      const counts = new Map<string, number>();
      for (const path of paths) counts.set(path, (counts.get(path) ?? 0) + 1);
      const twice = [...counts].filter(([path, n]) => n > 1 && path !== 'replication-info');
      expect(twice).toEqual([]);
      for (const archive of archives) expect(counts.get(`${archive}.asc`), archive).toBe(1);
    } finally {
      ctx.store.close();
      await bundled.close();
      await dir.cleanup();
    }
  });

  it('prefetches at most two files ahead of the one taken, in plan order', async () => {
    const dir = await tempDir('lf-prefetch-');
    const ctx = await syncContext({ feedRoot: feed.feedRoot, dataDir: dir.dir, entities: ENTITIES });
    const prefetch = new Prefetcher(ctx.feed.client, dir.dir);
    const names = PACKETS.flatMap((p) => ENTITIES.map((e) => jsonDumpPath(p, e)));
    const asked = () =>
      feed.requests
        .map((r) => r.path.replace('/api/musicbrainz/', ''))
        .filter((path) => names.includes(path));
    try {
      prefetch.plan(names);
      const before = asked().length;
      // The first file is fetched by its step; taking it starts the next two.
      expect(prefetch.take(names[0]!)).toBeUndefined();
      const second = prefetch.take(names[1]!);
      expect(second?.name).toBe(names[1]);
      expect((await second!.done).status).toBe('ok');
      const third = prefetch.take(names[2]!);
      expect(third?.name).toBe(names[2]);
      expect((await third!.done).status).toBe('ok');
      // Taking the third started the fourth and fifth at most; the sixth waits for its turn.
      const requested = asked().slice(before);
      expect(requested).toContain(names[1]);
      expect(requested).toContain(names[2]);
      expect(requested).not.toContain(names[0]);
      expect(requested).not.toContain(names[5]);
      // Each prefetched file's signature came with it: asked for before its turn, handed over whole.
      expect(await second!.signature).toMatch(/^-----BEGIN PGP SIGNATURE-----/);
      expect(feed.requests.map((r) => r.path)).toContain(`/api/musicbrainz/${names[3]}.asc`);
      // A file planned before the one taken and never taken itself is dropped, its signature too.
    } finally {
      prefetch.close();
      ctx.store.close();
      await dir.cleanup();
    }
  });
});

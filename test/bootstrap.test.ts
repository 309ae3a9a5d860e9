import { cp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { HELD_MBIDS_SQL } from '../src/db/currentQueries.js';
import { createApp } from '../src/http/app.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../src/samplefeed/server.js';
import { TEST_PUBLIC_KEY_FILE } from './support/archives.js';
import { startCli } from './support/cli.js';
import { gql, tempDir, testLogger, testService } from './support/harness.js';
import { listen } from './support/listen.js';
import { readBundledManifest } from './support/manifest.js';
import { SEARCH_SEGMENTS_SQL } from './support/searchFeed.js';
import { describeStores, type TestDatabase } from './support/stores.js';

const manifest = readBundledManifest();
const full = manifest.fullDump!;
const MERGED = 'bbb5fb86-29f4-4ffd-94d6-9976ee6621d6';
const MERGE_TARGET = 'b83f6a51-5dc5-40ce-95ce-8bf1ec7d0778';
const DELETED = '0cb5e728-cf4a-4ecd-9a2f-c2775dca1392';

/**
 * `livefeed bootstrap` against `feed` (its dumps URL and, with the token, its live feed), into
 * `db` (a SQLite file or PostgreSQL) or else `<dataDir>/livefeed.db`.
 */
function bootstrap(feed: SampleFeed, dataDir: string, more: string[] = [], db?: TestDatabase) {
  return startCli(
    [
      'bootstrap',
      '--dumps-url',
      feed.dumpsUrl,
      '--feed-url',
      feed.feedRoot,
      '--data-dir',
      dataDir,
      '--signing-key',
      TEST_PUBLIC_KEY_FILE,
      '--log-level',
      'info',
      ...(db ? ['--db', db.db] : []),
      ...more,
    ],
    { LIVEFEED_TOKEN: SAMPLE_TOKEN },
  );
}

/**
 * The change ids the search index holds (SQLite: the FTS5 rowid; PostgreSQL: `id`), and those of
 * every CURRENT entity's newest line as the store's reads give them: the index holds exactly those.
 */
async function indexedAndCurrent(db: TestDatabase): Promise<[number[], number[]]> {
  const column = db.store.kind === 'sqlite' ? 'rowid' : 'id';
  const indexed = await db.rows<{ id: number }>(
    `SELECT ${column} AS id FROM search_index ORDER BY ${column}`,
  );
  const held = (await db.rows<{ mbid: string }>(HELD_MBIDS_SQL)).map((r) => r.mbid);
  const current = (await db.reads.currentOfMbids(held))
    .flatMap((row) => (row?.status === 'CURRENT' ? [row.latest!.id] : []))
    .sort((a, b) => a - b);
  return [indexed.map((r) => Number(r.id)), current];
}

describeStores('livefeed bootstrap then sync, read over GraphQL', (stores) => {
  let feed: SampleFeed;
  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  });
  afterAll(async () => {
    await feed?.close();
  });

  it('imports every entity type of LATEST, then sync continues at the following packet; every sample entity answers', async () => {
    const data = await tempDir('lf-bootstrap-');
    const db = await stores.create(data.dir);
    try {
      const run = bootstrap(feed, data.dir, [], db);
      expect((await run.exited).code, run.stderr.join('\n')).toBe(0);
      const said = run.stdout.join('\n');
      expect(said).toContain(`bootstrapped full dump ${full.name} (packet ${full.packet})`);
      expect(said).toContain(`the sync continues at packet ${full.packet + 1}`);
      // SQLite: the imports' FTS5 segments merged into one (db/searchMerge.ts); PostgreSQL has none.
      const merge = run.events().find((e) => e.event === 'search-merge');
      if (stores.kind === 'sqlite') {
        expect(merge).toMatchObject({ done: true });
        expect(await db.rows(SEARCH_SEGMENTS_SQL)).toEqual([{ n: 1 }]);
      } else expect(merge).toBeUndefined();
      const sync = startCli(
        [
          'sync',
          '--once',
          '--feed-url',
          feed.feedRoot,
          '--data-dir',
          data.dir,
          '--db',
          db.db,
          '--log-level',
          'info',
        ],
        { LIVEFEED_TOKEN: SAMPLE_TOKEN },
      );
      expect((await sync.exited).code, sync.stderr.join('\n')).toBe(0);
      expect(sync.events().find((e) => e.event === 'sync-start')).toMatchObject({ from: full.packet + 1 });
      expect(feed.requests.some((r) => r.path.includes(`json-dump-${full.packet}/`))).toBe(false);

      // What a `serve` over the database answers: GraphQL over the store's reads.
      const app = createApp({
        reads: db.reads,
        display: db.store.display,
        service: testService(),
        logger: testLogger(),
        dataDir: data.dir,
      });
      const mbids = Object.values(full.entities).flatMap((e) => e.mbids);
      expect(mbids.length).toBeGreaterThan(20);
      const answer = await gql(app, 'query($m: [ID!]!) { entities(mbids: $m) { mbid } }', { m: mbids });
      expect(answer.data!.entities).toEqual(mbids.map((mbid) => ({ mbid })));
      const resolved = await gql(
        app,
        'query($m: [ID!]!) { resolve(mbids: $m) { status path target { mbid } } }',
        {
          m: [MERGED, DELETED],
        },
      );
      expect(resolved.data!.resolve).toEqual([
        { status: 'MERGED', path: [MERGE_TARGET], target: { mbid: MERGE_TARGET } },
        { status: 'DELETED', path: [], target: null },
      ]);
      const service = await gql(
        app,
        '{ service { completeEntityTypes bootstrap { dump packet } completeness { entity complete fullDump note } } }',
      );
      const { completeEntityTypes, bootstrap: done, completeness } = service.data!.service;
      expect(done).toEqual({ dump: full.name, packet: full.packet });
      expect(completeEntityTypes).toHaveLength(10);
      expect(completeEntityTypes).not.toContain('RECORDING');
      const recording = completeness.find((c: { entity: string }) => c.entity === 'RECORDING');
      expect(recording).toMatchObject({ complete: false, fullDump: full.name });
      expect(recording.note).toContain('only standalone recordings');

      // Its mirror names the packet after the full dumps' as its first: that packet holds no files.
      const server = await listen(app.handle);
      try {
        const info = await fetch(`${server.origin}/api/musicbrainz/replication-info`);
        expect(((await info.json()) as { history_from?: number }).history_from).toBe(full.packet + 1);
      } finally {
        await server.close();
      }

      // The search index holds every CURRENT entity, and finds one by its name without diacritics.
      const [indexed, current] = await indexedAndCurrent(db);
      expect(indexed).toEqual(current);
      expect(indexed.length).toBe((await db.currentCounts()).CURRENT);
      const found = await gql(
        app,
        '{ search(query: "north caro", entities: [AREA]) { nodes { mbid latest { name } } } }',
      );
      expect(found.data!.search.nodes).toContainEqual({
        mbid: expect.any(String),
        latest: { name: 'North Carolina' },
      });
    } finally {
      await db.close();
      await data.cleanup();
    }
  }, 120_000);
});

describeStores('livefeed bootstrap resumes and refuses (real CLI processes)', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  });
  afterAll(async () => {
    await feed?.close();
  });
  beforeEach(async () => {
    data = await tempDir('lf-bootstrap-');
    db = await stores.create(data.dir);
  });
  afterEach(async () => {
    feed.faults.clear();
    await db?.close();
    await data?.cleanup();
  });

  it('a run killed (SIGKILL) during a download resumes: stored types are skipped, the bytes it had are kept (Range)', async () => {
    const stall = `full-json-dumps/${full.name}/recording.tar.xz`;
    feed.faults.add({ path: stall, fault: { kind: 'stall', atByte: 200 } });
    const entities = ['--entities', 'area,artist,recording,work'];
    const first = bootstrap(feed, data.dir, entities, db);
    await first.waitUntil(
      (events) => events.some((e) => e.event === 'bootstrap-entity' && e.entity === 'artist'),
      'storing artist',
    );
    const partial = join(data.dir, 'bootstrap', full.name, 'partial');
    await waitFor(
      async () => (await partSizes(partial)).some((size) => size === 200),
      'the stalled bytes on disk',
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await db.rows("SELECT key FROM meta WHERE key LIKE 'bootstrap%' ORDER BY key")).toEqual([
      { key: `bootstrap:${full.name}:area` },
      { key: `bootstrap:${full.name}:artist` },
    ]);
    expect(await db.rows("SELECT count(*) AS n FROM changes WHERE entity = 'recording'")).toEqual([{ n: 0 }]);

    const requestsBefore = feed.requests.length;
    const second = bootstrap(feed, data.dir, entities, db);
    expect((await second.exited).code).toBe(0);
    expect(second.stdout).toEqual(
      expect.arrayContaining([
        'area: already stored by an earlier run',
        'artist: already stored by an earlier run',
      ]),
    );
    const later = feed.requests.slice(requestsBefore);
    expect(later.find((r) => r.path.endsWith('/recording.tar.xz'))?.status).toBe(206);
    expect(later.some((r) => r.path.endsWith('/area.tar.xz'))).toBe(false);
    expect(await db.rows("SELECT count(DISTINCT mbid) AS n FROM changes WHERE entity = 'recording'")).toEqual(
      [{ n: full.entities.recording!.mbids.length }],
    );
    expect(
      await db.rows(`SELECT synced_at IS NOT NULL AS done FROM packets WHERE number = ${full.packet}`),
    ).toEqual([{ done: 1 }]);
  }, 120_000);

  it('names the gap when the live feed no longer has the packet after the full dump', async () => {
    const root = await tempDir('lf-bootstrap-gap-feed-');
    try {
      await cp(BUNDLED_FEED_ROOT, root.dir, { recursive: true });
      const next = full.packet + 1;
      for (const suffix of ['', '.asc']) await rm(join(root.dir, `replication-${next}-v2.tar.bz2${suffix}`));
      const gap = await startSampleFeed({ root: root.dir });
      try {
        const run = bootstrap(gap, data.dir, ['--entities', 'area'], db);
        expect((await run.exited).code).toBe(1);
        expect(run.stderr.join('\n')).toContain(`the live feed no longer has packet ${next}`);
        // The import itself stands: the position is recorded, the sync will report the packet missing.
        expect(await db.rows("SELECT count(*) AS n FROM meta WHERE key = 'bootstrap_position'")).toEqual([
          { n: 1 },
        ]);
      } finally {
        await gap.close();
      }
    } finally {
      await root.cleanup();
    }
  }, 120_000);

  it('a bad signature fails: the entity type is not stored, no position is recorded, the archive is not kept', async () => {
    const root = await tempDir('lf-bootstrap-bad-feed-');
    try {
      await cp(BUNDLED_FEED_ROOT, root.dir, { recursive: true });
      const dir = join(root.dir, 'full-json-dumps', full.name);
      // The area archive's signature over the artist archive: a valid signature of other bytes.
      await writeFile(join(dir, 'artist.tar.xz.asc'), await readFile(join(dir, 'area.tar.xz.asc')));
      const bad = await startSampleFeed({ root: root.dir });
      try {
        const run = bootstrap(bad, data.dir, ['--entities', 'area,artist'], db);
        expect((await run.exited).code).not.toBe(0);
        expect(run.stderr.join('\n')).toMatch(new RegExp(`${full.name}/artist\\.tar\\.xz`));
        expect(await db.rows('SELECT DISTINCT entity FROM changes')).toEqual([{ entity: 'area' }]);
        expect(await db.rows("SELECT count(*) AS n FROM meta WHERE key = 'bootstrap_position'")).toEqual([
          { n: 0 },
        ]);
        expect(await readdir(join(data.dir, 'bootstrap', full.name))).not.toContain('artist.tar.xz');
      } finally {
        await bad.close();
      }
    } finally {
      await root.cleanup();
    }
  }, 120_000);
});

async function partSizes(dir: string): Promise<number[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return Promise.all(
    names.filter((n) => n.endsWith('.part')).map(async (n) => (await stat(join(dir, n))).size),
  );
}

async function waitFor(test: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

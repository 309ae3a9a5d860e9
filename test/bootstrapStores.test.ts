import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { BUNDLED_SIGNING_KEY } from '../src/cli/targets.js';
import { FeedClient } from '../src/feed/client.js';
import { ENTITY_TYPES } from '../src/feed/entities.js';
import { BUNDLED_FEED_ROOT } from '../src/samplefeed/bundled.js';
import { type SampleFeed, startSampleFeed } from '../src/samplefeed/server.js';
import { bootstrapFromFullDumps } from '../src/sync/bootstrap.js';
import { sqliteBootstrapStore } from '../src/sync/bootstrapStore.js';
import type { SqliteSyncStore } from '../src/sync/syncStore.js';
import { createVerifier } from '../src/sync/verifier.js';
import { syncOnce } from '../src/sync/worker.js';
import { createTestKeyHome, signFile, TEST_PUBLIC_KEY_FILE, writeJsonDump } from './support/archives.js';
import { startCli } from './support/cli.js';
import { syncContextOn, tempDir, testLogger } from './support/harness.js';
import { readBundledManifest } from './support/manifest.js';
import { POSTGRES_TEST_PASSWORD } from './support/postgres.js';
import { describeStores, SQLITE_STORES, snapshotStore, type TestDatabase } from './support/stores.js';

/**
 * `livefeed bootstrap` as a real process on both stores (issue 14 First import, issue 17):
 * `bootstrap --demo` then `sync --demo --once` into a SQLite file or a PostgreSQL database ends
 * with the rows of the same two steps run in process into SQLite; a bootstrap killed with kill -9
 * during an entity type's import leaves that type absent, and the next run completes it.
 */

const full = readBundledManifest().fullDump!;
/** Lines of the big label archive of the kill test: its import lasts long enough to be killed in. */
const BIG_LINES = 40_000;

let work: Awaited<ReturnType<typeof tempDir>>;
/** The bundled feed with its label full dump replaced by a big one, signed with the TEST key. */
let bigFeed: SampleFeed;
let reference: Record<string, unknown>;

/** What bootstrap records besides the sync's tables: its meta rows (the position without its time). */
async function bootstrapRecords(db: TestDatabase) {
  const rows = await db.rows<{ key: string; value: string }>(
    "SELECT key, value FROM meta WHERE key LIKE 'bootstrap%' ORDER BY key",
  );
  return rows.map(({ key, value }) => {
    if (key !== 'bootstrap_position') return { key, value };
    const { at: _at, ...position } = JSON.parse(value) as Record<string, unknown>;
    return { key, position };
  });
}

/** The bootstrap's and sync's rows, and the search index's size, for comparison across stores. */
async function snapshot(db: TestDatabase) {
  const indexed = await db.rows<{ n: number }>('SELECT count(*) AS n FROM search_index');
  return {
    ...(await snapshotStore(db)),
    bootstrap: await bootstrapRecords(db),
    searchIndex: Number(indexed[0]!.n),
  };
}

beforeAll(async () => {
  work = await tempDir('lf-bootstrap-stores-');
  // The reference: bootstrap then one sync pass of the bundled feed, in process, into SQLite.
  const bundled = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  const dataDir = join(work.dir, 'reference');
  const db = await SQLITE_STORES.create(dataDir);
  const dumps = new FeedClient({ feedRoot: bundled.dumpsUrl, token: undefined });
  try {
    const verifier = await createVerifier(BUNDLED_SIGNING_KEY, 'fail', testLogger());
    const done = await bootstrapFromFullDumps(sqliteBootstrapStore(db.store as SqliteSyncStore), {
      dumps,
      verifier,
      entities: ENTITY_TYPES,
      workDir: join(dataDir, 'bootstrap'),
      logger: testLogger(),
    });
    expect(done.packet).toBe(full.packet);
    const ctx = await syncContextOn(db.store, {
      feedRoot: bundled.feedRoot,
      dataDir,
      replicationPackets: true,
      verifier,
    });
    expect((await syncOnce({ ...ctx, policy: { ...ctx.policy, settleAfterMs: null } })).problems).toEqual([]);
    await ctx.feed.client.close();
    reference = await snapshot(db);
  } finally {
    await dumps.close();
    await db.close();
    await bundled.close();
  }
  bigFeed = await startSampleFeed({ root: await bigLabelFeed(join(work.dir, 'big-feed')) });
}, 120_000);

afterAll(async () => {
  await bigFeed?.close();
  await work?.cleanup();
});

/** A copy of the bundled feed whose label full dump holds {@link BIG_LINES} lines of 1.5 KB, signed. */
async function bigLabelFeed(root: string): Promise<string> {
  await cp(BUNDLED_FEED_ROOT, root, { recursive: true });
  const id = (n: number) => `b1000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const lines = Array.from({ length: BIG_LINES }, (_, i) =>
    JSON.stringify({ id: id(i + 1), name: `Label ${i}`, pad: 'p'.repeat(1500) }),
  );
  const built = await writeJsonDump(join(work.dir, 'big-label'), {
    packet: full.packet,
    entity: 'label',
    lines,
  });
  const target = join(root, 'full-json-dumps', full.name, 'label.tar.xz');
  await cp(built.path, target);
  const keys = await createTestKeyHome();
  try {
    await signFile(target, keys, { fingerprint: keys.fingerprint });
  } finally {
    await keys.close();
  }
  return root;
}

describeStores('livefeed bootstrap as a real process', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;

  afterEach(async () => {
    await db?.close();
    await data?.cleanup();
  });

  /** `sync --demo --once --from <from>` then `bootstrap --demo` into a new database; what bootstrap printed. */
  async function syncThenBootstrap(from: number) {
    data = await tempDir('lf-bootstrap-store-after-');
    db = await stores.create(data.dir);
    const where = ['--db', db.db, '--data-dir', data.dir];
    const first = startCli(['sync', '--demo', '--once', '--from', String(from), ...where]);
    expect((await first.exited).code, first.stderr.join('\n')).toBe(0);
    const boot = startCli(['bootstrap', '--demo', ...where]);
    expect((await boot.exited).code, boot.stderr.join('\n')).toBe(0);
    return { where, said: boot.stdout.join('\n'), events: boot.events() };
  }

  it('bootstrap --demo then sync --demo --once store what the same two steps store in process into SQLite', async () => {
    data = await tempDir('lf-bootstrap-store-');
    db = await stores.create(data.dir);
    const boot = startCli(['bootstrap', '--demo', '--db', db.db, '--data-dir', data.dir]);
    const booted = await boot.exited;
    expect(booted.code, boot.stderr.join('\n')).toBe(0);
    expect(boot.stdout.join('\n')).toContain(`the sync continues at packet ${full.packet + 1}`);
    expect(boot.stderr.join('\n')).not.toContain(POSTGRES_TEST_PASSWORD);
    expect(boot.events().filter((e) => e.event === 'change-stream-rewritten')).toEqual([]);
    if (stores.kind === 'postgres') {
      // Analyzed at the end: the common-words threshold reads the index size from this estimate.
      const [estimate] = await db.rows<{ n: number }>(
        "SELECT reltuples AS n FROM pg_class WHERE oid = 'search_index'::regclass",
      );
      const [counted] = await db.rows<{ n: number }>('SELECT count(*) AS n FROM search_index');
      expect(Number(estimate!.n)).toBe(Number(counted!.n));
    }
    const sync = startCli([
      'sync',
      '--demo',
      '--once',
      '--db',
      db.db,
      '--data-dir',
      data.dir,
      '--log-level',
      'info',
    ]);
    const synced = await sync.exited;
    expect(synced.code, sync.stderr.join('\n')).toBe(0);
    expect(sync.events().find((e) => e.event === 'sync-start')).toMatchObject({ from: full.packet + 1 });
    expect(await snapshot(db)).toEqual(reference);
    expect(await db.rows("SELECT value FROM meta WHERE key = 'demo'")).toEqual([{ value: 'true' }]);
    // Nothing was served before the bootstrap: nothing was stored behind a reader.
    expect(await db.rows("SELECT value FROM meta WHERE key = 'feed_rewrites'")).toEqual([]);
    expect(sync.events().filter((e) => e.event === 'change-stream-rewritten')).toEqual([]);
  }, 90_000);

  it('a bootstrap after a sync of newer packets records the packets between as incomplete; the next sync fetches them and ends as bootstrap then sync', async () => {
    const { where, said, events } = await syncThenBootstrap(full.packet + 6);
    // The full dump was stored behind what the first sync's stream had served: the bootstrap says so.
    expect(events.filter((e) => e.event === 'change-stream-rewritten')).toEqual([
      expect.objectContaining({ level: 40, fromPacket: full.packet }),
    ]);
    const last = readBundledManifest().lastPacket;
    expect(said).toContain(
      `the database already held packets ${full.packet + 6}..${last}, newer than the full dump: ` +
        `packets ${full.packet + 1}..${full.packet + 5} between them are now recorded as incomplete`,
    );
    const incomplete = await db.rows<{ number: number }>(
      'SELECT number FROM packets WHERE synced_at IS NULL ORDER BY number',
    );
    expect(incomplete.map((row) => Number(row.number)).slice(0, 5)).toEqual(
      [1, 2, 3, 4, 5].map((n) => full.packet + n),
    );
    const sync = startCli(['sync', '--demo', '--once', ...where, '--log-level', 'info']);
    expect((await sync.exited).code, sync.stderr.join('\n')).toBe(0);
    expect(sync.events().find((e) => e.event === 'sync-start')).toMatchObject({ from: full.packet + 1 });
    expect(await snapshot(db)).toEqual(reference);
    // The full dump and the packets between were stored behind what the stream had served: cursors
    // made before are refused from the full dump's packet on (db/feedRewrites.ts).
    const [rewrites] = await db.rows<{ value: string }>("SELECT value FROM meta WHERE key = 'feed_rewrites'");
    const packets = (JSON.parse(rewrites!.value) as [number, number][]).map(([, packet]) => packet);
    expect(Math.min(...packets)).toBe(full.packet);
    expect(Math.max(...packets)).toBe(full.packet + 5);
    // The sync that stored the gap behind readers says so, from the gap's first packet.
    const warned = sync.events().filter((e) => e.event === 'change-stream-rewritten');
    expect(warned).toEqual([
      expect.objectContaining({ level: 40, fromPacket: full.packet + 1, epoch: packets.length }),
    ]);
    expect(warned[0]!.msg).toContain('HISTORY_REWRITTEN');
  }, 90_000);

  it('a bootstrap into a database holding the packets right after the full dump continues after them', async () => {
    const { said } = await syncThenBootstrap(full.packet + 1);
    expect(said).toContain(
      `the database already held packets ${full.packet + 1}..${readBundledManifest().lastPacket}, newer than the full dump: the sync continues after them`,
    );
    expect(said).not.toContain(`continues at packet ${full.packet + 1}`);
  }, 90_000);

  it('a bootstrap into a database holding an incomplete packet below the full dump says latestPacket stays below it', async () => {
    data = await tempDir('lf-bootstrap-store-below-');
    db = await stores.create(data.dir);
    // An earlier sync's packet that never completed, far below the full dump.
    await db.rows("INSERT INTO packets (number, created_at) VALUES (186050, '2026-11-29T00:00:00Z')");
    const boot = startCli(['bootstrap', '--demo', '--db', db.db, '--data-dir', data.dir]);
    expect((await boot.exited).code, boot.stderr.join('\n')).toBe(0);
    const said = boot.stdout.join('\n');
    expect(said).toContain(
      'packets below the full dump are incomplete or missing (an earlier sync or bootstrap left them), so latestPacket stays at (none)',
    );
    expect(said).not.toContain('the sync continues');
  }, 90_000);

  it('a bootstrap killed with kill -9 during an entity type import leaves it absent; the next run completes it', async () => {
    data = await tempDir('lf-bootstrap-store-kill-');
    db = await stores.create(data.dir);
    const run = () =>
      startCli([
        'bootstrap',
        '--entities',
        'area,label',
        '--dumps-url',
        bigFeed.dumpsUrl,
        '--signing-key',
        TEST_PUBLIC_KEY_FILE,
        '--db',
        db.db,
        '--data-dir',
        data.dir,
        '--log-level',
        'info',
      ]);
    const first = run();
    await first.waitUntil(
      (events) =>
        events.some((e) => e.event === 'bootstrap-verified' && String(e.file).endsWith('label.tar.xz')),
      'the label archive verified',
    );
    // Killed inside the label import's transaction: PostgreSQL shows its COPY running; on SQLite
    // the import of 60 MB of lines follows the signature check at once and lasts seconds.
    if (stores.kind === 'postgres') await waitForCopy(db, first.child);
    else await sleep(300);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await db.rows("SELECT count(*) AS n FROM changes WHERE entity = 'label'")).toEqual([{ n: 0 }]);
    expect(await db.rows("SELECT key FROM meta WHERE key LIKE 'bootstrap%' ORDER BY key")).toEqual([
      { key: `bootstrap:${full.name}:area` },
    ]);
    expect(await db.rows("SELECT count(*) AS n FROM dumps WHERE entity = 'label'")).toEqual([{ n: 0 }]);

    const second = run();
    const exit = await second.exited;
    expect(exit.code, second.stderr.join('\n')).toBe(0);
    expect(second.stdout).toContain('area: already stored by an earlier run');
    expect(second.stdout.join('\n')).toContain(
      `label: ${BIG_LINES} entities, 0 quarantined, ${BIG_LINES} lines`,
    );
    expect(await db.rows("SELECT count(*) AS n FROM changes WHERE entity = 'label'")).toEqual([
      { n: BIG_LINES },
    ]);
    expect(
      await db.rows(`SELECT synced_at IS NOT NULL AS done FROM packets WHERE number = ${full.packet}`),
    ).toEqual([{ done: 1 }]);
    expect((await bootstrapRecords(db)).map((r) => r.key)).toEqual([
      `bootstrap:${full.name}:area`,
      `bootstrap:${full.name}:label`,
      'bootstrap_position',
    ]);
  }, 120_000);
});

/** Until the bootstrap process's COPY into `changes` runs (seen from the server). */
async function waitForCopy(db: TestDatabase, child: { exitCode: number | null }): Promise<void> {
  for (;;) {
    const copying = await db.rows(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = 'livefeed bootstrap' AND query LIKE 'COPY changes%'",
    );
    if (copying.length > 0) return;
    if (child.exitCode !== null) throw new Error('the bootstrap ended before its COPY was seen');
    await sleep(10);
  }
}

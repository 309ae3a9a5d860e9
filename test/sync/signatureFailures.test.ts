import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { EntityType } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import type { SampleFeed } from '../../src/samplefeed/server.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { createTestKeyHome, signFile, TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { syncContextOn, type tempDir, testLogger } from '../support/harness.js';
import { signedDumpFeed } from '../support/signedDumpFeed.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

/**
 * Issue 11: a signature that cannot succeed is not downloaded again in the same pass (counted in the
 * sample feed's request log); a missing .asc is retried for a day, then reads "signature missing
 * upstream", and `--accept-unsigned` stores the named file UNVERIFIED, saying who accepted it; on
 * both stores (issue 17).
 */

const PACKET = 70;
const ENTITIES: EntityType[] = ['area', 'artist', 'label'];
const BAD = jsonDumpPath(PACKET, 'artist');
const UNSIGNED = jsonDumpPath(PACKET, 'label');
const line = (n: number) =>
  JSON.stringify({ id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, name: `E${n}` });

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;

beforeAll(async () => {
  ({ feed, work } = await signedDumpFeed(
    'lf-sigfail-',
    ENTITIES.map((entity, i) => ({
      packet: PACKET,
      entity,
      lines: [line(i + 1)],
      signature: entity === 'label' ? 'none' : jsonDumpPath(PACKET, entity) === BAD ? 'other bytes' : 'good',
    })),
  ));
}, 60_000);
afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

/** GETs of `path` among the feed's requests from the `from`th on. */
const gets = (path: string, from: number) =>
  feed.requests.slice(from).filter((r) => r.path === `/api/musicbrainz/${path}`).length;

describeStores('signature failures in a sync', (stores) => {
  let db: TestDatabase | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  /** A sync context over a new database of this store in `work/<dir>`; closed after the test. */
  async function contextIn(dir: string, entities: EntityType[], logger: ReturnType<typeof testLogger>) {
    const dataDir = join(work.dir, `${dir}-${stores.kind}`);
    db = await stores.create(dataDir);
    const opened = db;
    closers.push(() => opened.close());
    const ctx = await syncContextOn(opened.store, {
      feedRoot: feed.feedRoot,
      dataDir,
      entities,
      logger,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    });
    closers.push(() => ctx.feed.client.close());
    return ctx;
  }
  const dump = async (entity: EntityType) =>
    (
      await db!.rows<{ status: string; error: string; attempts: number }>(
        'SELECT status, error, attempts FROM dumps WHERE packet = ? AND entity = ?',
        PACKET,
        entity,
      )
    )[0]!;

  it('downloads a file with a bad signature once per pass, retries a missing .asc for a day, then accepts it on request', async () => {
    const lines: string[] = [];
    const logger = testLogger(lines);
    const base = await contextIn('data', ENTITIES, logger);
    let clock = new Date('2026-11-22T12:00:00Z');
    const ctx = { ...base, now: () => clock };
    // Pass 1: the archive with the bad signature is downloaded once, not three times.
    const first = feed.requests.length;
    let before = first;
    let report = await syncOnce(ctx, { from: PACKET });
    const inPass = (path: string) => gets(path, before);
    expect(inPass(BAD)).toBe(1);
    expect(inPass(UNSIGNED)).toBe(1);
    expect((await dump('area')).status).toBe('SYNCED');
    expect(await dump('artist')).toMatchObject({
      status: 'FAILED',
      error: expect.stringContaining('file does not match signature'),
    });
    expect(await dump('label')).toMatchObject({
      status: 'FAILED',
      error: expect.stringContaining('MISSING'),
    });
    expect(report.problems.map((p) => p.file).sort()).toEqual([BAD, UNSIGNED]);
    expect(lines.filter((l) => l.includes('"redownload"'))).toEqual([]);

    // Follow mode before the retry time: neither is asked.
    clock = new Date(clock.getTime() + 30_000);
    before = feed.requests.length;
    report = await syncOnce({ ...ctx, policy: { ...ctx.policy, deferFailed: true } }, { from: PACKET });
    expect([inPass(BAD), inPass(UNSIGNED), report.deferred]).toEqual([0, 0, 2]);

    // A later pass (here --once, a day later): once more each; the .asc has been missing a day now.
    clock = new Date(clock.getTime() + 24 * 3_600_000);
    before = feed.requests.length;
    report = await syncOnce(ctx, { from: PACKET });
    expect([inPass(BAD), inPass(UNSIGNED)]).toEqual([1, 1]);
    expect(report.problems.find((p) => p.file === UNSIGNED)?.reason).toMatch(/^signature missing upstream/);
    expect((await dump('artist')).attempts).toBe(2);
    expect(await dump('label')).toMatchObject({
      status: 'FAILED',
      error: expect.stringMatching(
        /^signature missing upstream: no \.asc since 2026-11-22T12:00:00\.000Z.*--accept-unsigned json-dumps\/json-dump-70\/label\.tar\.xz/,
      ),
    });

    // The operator accepts that one file: stored UNVERIFIED, and the log says who accepted what.
    const accepting = {
      ...ctx,
      feed: {
        ...ctx.feed,
        verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger, {
          acceptUnsigned: [UNSIGNED],
          operator: 'ops-person',
        }),
      },
    };
    await syncOnce(accepting, { from: PACKET });
    expect((await dump('label')).status).toBe('SYNCED');
    expect(await db!.rows('SELECT signature FROM feed_files WHERE name = ?', UNSIGNED)).toEqual([
      { signature: 'UNVERIFIED' },
    ]);
    const accepted = lines.map((l) => JSON.parse(l)).filter((l) => l.event === 'accepted-unsigned');
    expect(accepted).toEqual([
      expect.objectContaining({ file: UNSIGNED, user: 'ops-person', flag: '--accept-unsigned' }),
    ]);
    // Nothing else is weakened: the bad signature still fails.
    expect((await dump('artist')).status).toBe('FAILED');
    expect(gets(BAD, first)).toBe(3);
  });

  it('a missing .asc that lands later is stored VERIFIED', async () => {
    const ctx = await contextIn('late', ['label'], testLogger());
    await syncOnce(ctx, { from: PACKET });
    const keyHome = await createTestKeyHome();
    const archive = join(work.dir, 'feed', UNSIGNED);
    try {
      await signFile(archive, keyHome, { fingerprint: keyHome.fingerprint });
      await syncOnce(ctx, { from: PACKET });
    } finally {
      await rm(`${archive}.asc`, { force: true });
      await keyHome.close();
    }
    expect(
      await db!.rows(
        'SELECT d.status, f.signature FROM dumps d JOIN feed_files f ON f.name = ? WHERE d.entity = ?',
        UNSIGNED,
        'label',
      ),
    ).toEqual([{ status: 'SYNCED', signature: 'VERIFIED' }]);
  });
});

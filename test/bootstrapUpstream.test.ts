import { createHash } from 'node:crypto';
import { cp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEFAULT_MAX_ARCHIVE_BYTES } from '../src/feed/sizeLimit.js';
import { BUNDLED_FEED_ROOT, SAMPLE_TOKEN, startSampleFeed } from '../src/samplefeed/server.js';
import { FULL_DUMP_MAX_RATIO, fullDumpMaxBytes } from '../src/sync/bootstrap.js';
import { createTestKeyHome, signFile, TEST_PUBLIC_KEY_FILE } from './support/archives.js';
import { startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';
import { readBundledManifest } from './support/manifest.js';

/**
 * `livefeed bootstrap` against upstream's behaviour (FEED.md, Full JSON dumps, Signatures and
 * Errors): the full dumps' host is a plain web server whose every 404 is an HTML page; an archive
 * may be published without its `.asc`; the packet after the full dump may lack its `.asc`, or be
 * the latest and not copied yet. Real CLI processes over a copy of the bundled feed (SQLite: the
 * store plays no part here).
 */

const full = readBundledManifest().fullDump!;
const next = full.packet + 1;

let feedDir: Awaited<ReturnType<typeof tempDir>>;
let data: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  feedDir = await tempDir('lf-bootstrap-upstream-feed-');
  data = await tempDir('lf-bootstrap-upstream-');
  await cp(BUNDLED_FEED_ROOT, feedDir.dir, { recursive: true });
});
afterEach(async () => {
  await feedDir.cleanup();
  await data.cleanup();
});

/** Runs `livefeed bootstrap` of `entities` over the feed copy to its end; the feed's requests too. */
async function bootstrap(entities: string, more: string[] = []) {
  const feed = await startSampleFeed({ root: feedDir.dir });
  try {
    const run = startCli(
      [
        'bootstrap',
        ...['--dumps-url', feed.dumpsUrl, '--feed-url', feed.feedRoot, '--data-dir', data.dir],
        ...['--entities', entities, '--log-level', 'info'],
        ...more,
      ],
      { LIVEFEED_TOKEN: SAMPLE_TOKEN },
    );
    const { code } = await run.exited;
    return { code, stdout: run.stdout.join('\n'), stderr: run.stderr.join('\n'), requests: feed.requests };
  } finally {
    await feed.close();
  }
}

function storedEntities(): string[] {
  const db = new Database(join(data.dir, 'livefeed.db'), { readonly: true });
  try {
    return db.prepare('SELECT DISTINCT entity FROM changes ORDER BY entity').pluck().all() as string[];
  } finally {
    db.close();
  }
}

const dumpFile = (name: string) => join(feedDir.dir, 'full-json-dumps', full.name, name);

it('an archive published without its .asc: verified, it fails naming the file; unverified, it is imported without asking for the .asc', async () => {
  await rm(dumpFile('artist.tar.xz.asc'));
  const verified = await bootstrap('area,artist', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(verified.code).not.toBe(0);
  // The host's HTML 404 is a missing signature, not a wrong --feed-url.
  expect(verified.stderr).toContain(`${full.name}/artist.tar.xz`);
  expect(verified.stderr).toMatch(/signature/i);
  expect(verified.stderr).not.toContain('no route');
  expect(storedEntities()).toEqual(['area']);

  const unverified = await bootstrap('area,artist', ['--verify', 'off']);
  expect(unverified.code, unverified.stderr).toBe(0);
  expect(storedEntities()).toEqual(['area', 'artist']);
  expect(unverified.requests.filter((r) => r.path.endsWith('/artist.tar.xz.asc'))).toEqual([]);
}, 120_000);

/** Writes the dump folder's SHA256SUMS (`sha256sum` style) over `entries` and signs it with the test key. */
async function writeSums(entries: [file: string, bytes: Buffer][]): Promise<void> {
  const body = entries.map(
    ([file, bytes]) => `${createHash('sha256').update(bytes).digest('hex')}  ${file}\n`,
  );
  await writeFile(dumpFile('SHA256SUMS'), body.join(''));
  const keys = await createTestKeyHome();
  try {
    await signFile(dumpFile('SHA256SUMS'), keys);
  } finally {
    await keys.close();
  }
}

it('an archive without its .asc is verified by the folder’s signed SHA256SUMS, and refused when it lists another hash', async () => {
  const [area, artist] = await Promise.all(
    ['area.tar.xz', 'artist.tar.xz'].map((f) => readFile(dumpFile(f))),
  );
  await rm(dumpFile('artist.tar.xz.asc'));
  await writeSums([
    ['area.tar.xz', area!],
    ['artist.tar.xz', artist!],
  ]);
  const vouched = await bootstrap('area,artist', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(vouched.code, vouched.stderr).toBe(0);
  expect(storedEntities()).toEqual(['area', 'artist']);
  expect(vouched.stderr).toContain(
    `${full.name}/artist.tar.xz: signature VERIFIED (no .asc; its SHA-256 is the one ${full.name}/SHA256SUMS lists, whose signature verified)`,
  );

  // The list names other bytes for artist: refused, nothing of it stored.
  await rm(data.dir, { recursive: true });
  await writeSums([['artist.tar.xz', area!]]);
  const refused = await bootstrap('artist', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(
    /signature of \S+\/artist\.tar\.xz is INVALID: no \.asc, and its SHA-256 [0-9a-f]{64} is not the [0-9a-f]{64} that \S+\/SHA256SUMS lists/,
  );
  expect(storedEntities()).toEqual([]);

  // With --verify warn the same archive is imported, marked INVALID with the reason.
  await rm(data.dir, { recursive: true });
  const warned = await bootstrap('artist', ['--signing-key', TEST_PUBLIC_KEY_FILE, '--verify', 'warn']);
  expect(warned.code, warned.stderr).toBe(0);
  expect(warned.stderr).toMatch(/artist\.tar\.xz: signature INVALID \(no \.asc, and its SHA-256/);
  expect(storedEntities()).toEqual(['artist']);

  // A list that does not name the archive vouches for nothing: MISSING, as without a list.
  await rm(data.dir, { recursive: true });
  await writeSums([['area.tar.xz', area!]]);
  const unlisted = await bootstrap('artist', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(unlisted.code).not.toBe(0);
  expect(unlisted.stderr).toContain(`signature of ${full.name}/artist.tar.xz is MISSING`);

  // A list whose own signature is another file's vouches for nothing.
  await writeSums([['artist.tar.xz', artist!]]);
  await writeFile(dumpFile('SHA256SUMS.asc'), await readFile(dumpFile('area.tar.xz.asc')));
  const badList = await bootstrap('artist', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(badList.code).not.toBe(0);
  expect(badList.stderr).toContain(`signature of ${full.name}/SHA256SUMS is INVALID`);
  expect(storedEntities()).toEqual([]);
}, 120_000);

it('an archive the host answers 404 for (an HTML page) is named as missing, not as a route miss', async () => {
  await rm(dumpFile('artist.tar.xz'));
  const run = await bootstrap('artist', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(run.code).not.toBe(0);
  expect(run.stderr).toContain(`full dump ${full.name} has no artist archive`);
  expect(run.stderr).not.toContain('no route');
}, 120_000);

it('the packet after the full dump without its .asc, or the latest and not copied yet, is no gap', async () => {
  await rm(join(feedDir.dir, `replication-${next}-v2.tar.bz2.asc`));
  const unsigned = await bootstrap('area', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(unsigned.code, unsigned.stderr).toBe(0);
  expect(unsigned.stderr).not.toContain('no longer has packet');
  // The archive was asked for, not its signature.
  expect(unsigned.requests.some((r) => r.path.endsWith(`/replication-${next}-v2.tar.bz2`))).toBe(true);

  // Only packet `next` is left after the full dump, its JSON dumps published, its replication
  // packet not copied yet: replication-info names it, it answers 404.
  for (const name of await readdir(feedDir.dir)) {
    const packet = /^replication-(\d+)-v2\.tar\.bz2/.exec(name);
    if (packet && Number(packet[1]) >= next) await rm(join(feedDir.dir, name));
  }
  for (const name of await readdir(join(feedDir.dir, 'json-dumps'))) {
    if (Number(name.replace('json-dump-', '')) > next)
      await rm(join(feedDir.dir, 'json-dumps', name), { recursive: true });
  }
  await rm(data.dir, { recursive: true });
  const notYet = await bootstrap('area', ['--signing-key', TEST_PUBLIC_KEY_FILE]);
  expect(notYet.code, notYet.stderr).toBe(0);
  expect(notYet.stderr).not.toContain('no longer has packet');
  expect(notYet.stdout).toContain(`the sync continues at packet ${next}`);
}, 120_000);

it('fullDumpMaxBytes: 64 × the archive once that passes the 64 GiB default; a given --max-dump-bytes decides', async () => {
  // The release dump: tens of GB of xz at about 12:1 passes the feed's 64 GiB default.
  expect(fullDumpMaxBytes(1_000_000)).toBe(DEFAULT_MAX_ARCHIVE_BYTES);
  expect(fullDumpMaxBytes(25 * 2 ** 30)).toBe(FULL_DUMP_MAX_RATIO * 25 * 2 ** 30);
  const limited = await bootstrap('area', [
    '--signing-key',
    TEST_PUBLIC_KEY_FILE,
    '--max-dump-bytes',
    '4KiB',
  ]);
  expect(limited.code).not.toBe(0);
  expect(limited.stderr).toContain('decompresses to more than 4096 bytes (size limit, --max-dump-bytes)');
  expect(storedEntities()).toEqual([]);
}, 120_000);

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../src/samplefeed/server.js';
import { startCli } from './support/cli.js';
import { createGpgHome, type GpgHome } from './support/gpg.js';
import { tempDir } from './support/harness.js';

/** Issue 11: the signing key is checked when livefeed starts (real processes, real gpg keys). */

let gpg: GpgHome;
let feed: SampleFeed;
let data: Awaited<ReturnType<typeof tempDir>>;
let weakKey: string;
let weakFingerprint: string;

beforeAll(async () => {
  gpg = await createGpgHome();
  weakFingerprint = await gpg.generateKey('Weak <weak@livefeed.test>', { algo: 'rsa1024' });
  weakKey = join(gpg.dir, 'weak.asc');
  await writeFile(weakKey, await gpg.exportPublic(weakFingerprint));
  feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  data = await tempDir('lf-keycli-');
}, 60_000);
afterAll(async () => {
  await feed?.close();
  await data?.cleanup();
  await gpg?.close();
});

const env = { LIVEFEED_TOKEN: SAMPLE_TOKEN };

describe('the signing key at start-up (CLI)', () => {
  it('a weak key stops livefeed start with exit 2, naming --allow-weak-signing-key', async () => {
    const cli = startCli(
      [
        'start',
        '--feed-url',
        feed.feedRoot,
        '--data-dir',
        join(data.dir, 'weak'),
        '--port',
        '0',
        '--signing-key',
        weakKey,
      ],
      env,
    );
    const { code } = await cli.exited;
    const stderr = cli.stderr.join('\n');
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(
      new RegExp(`livefeed: signing key ${weakFingerprint} .*RSA key of 1024 bits.*--allow-weak-signing-key`),
    );
    expect(cli.events().find((e) => e.event === 'signing-key')).toMatchObject({
      fingerprint: weakFingerprint,
      algorithm: 'RSA',
      bits: 1024,
    });
    // No file was fetched with a key that would refuse every signature.
    expect(feed.requests.some((r) => r.path.includes('json-dumps'))).toBe(false);
  }, 60_000);

  it('--allow-weak-signing-key lets it through and says so once', async () => {
    const cli = startCli(
      [
        'sync',
        '--once',
        '--feed-url',
        feed.feedRoot,
        '--data-dir',
        join(data.dir, 'allowed'),
        '--to',
        '186100',
        '--from',
        '186100',
        '--no-replication-packets',
        '--signing-key',
        weakKey,
        '--allow-weak-signing-key',
      ],
      env,
    );
    const { code } = await cli.exited;
    // The sample feed is signed by another key: its files fail (exit 1), after the key was accepted.
    expect(code, cli.stderr.join('\n')).toBe(1);
    expect(cli.events().filter((e) => e.event === 'weak-signing-key-allowed')).toHaveLength(1);
    expect(cli.stderr.join('\n')).toMatch(/signature by unknown key/);
  }, 60_000);

  it('--verify fail without --signing-key is a configuration error', async () => {
    const cli = startCli(
      [
        'sync',
        '--once',
        '--feed-url',
        feed.feedRoot,
        '--data-dir',
        join(data.dir, 'nokey'),
        '--verify',
        'fail',
      ],
      env,
    );
    const { code } = await cli.exited;
    expect(code).toBe(2);
    expect(cli.stderr.join('\n')).toMatch(/--verify fail needs a signing key/);
  }, 60_000);
});

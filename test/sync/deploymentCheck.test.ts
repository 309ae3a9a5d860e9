import { copyFile, cp, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { checksDeploymentNames } from '../../src/sync/deploymentCheck.js';
import { startCli } from '../support/cli.js';
import { tempDir } from '../support/harness.js';

/**
 * `--deployment test` on a feed root that serves production's names (FEED.md, Deployments and
 * URLs: `replication-N-v2.tar.bz2` on production only; the bundled feed is production's): every
 * replication packet would answer 404 and wait forever, and their hours would look deleted. The
 * sync asks for the other name once a packet answers 404 and stops as a configuration error.
 * Real CLI processes.
 */

let feed: SampleFeed;
beforeAll(async () => {
  feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
});
afterAll(async () => {
  await feed?.close();
});

async function syncTest(more: string[], on: SampleFeed = feed, deployment = 'test') {
  const data = await tempDir('lf-deployment-');
  try {
    const run = startCli(
      [
        'sync',
        '--once',
        ...['--feed-url', on.feedRoot, '--data-dir', data.dir, '--deployment', deployment],
        ...['--entities', 'area,artist', '--log-level', 'info'],
        ...more,
      ],
      { LIVEFEED_TOKEN: SAMPLE_TOKEN },
    );
    const { code } = await run.exited;
    const db = new Database(join(data.dir, 'livefeed.db'), { readonly: true });
    try {
      const complete = db.prepare('SELECT count(*) FROM packets WHERE synced_at IS NOT NULL').pluck().get();
      return { code, stderr: run.stderr.join('\n'), complete };
    } finally {
      db.close();
    }
  } finally {
    await data.cleanup();
  }
}

const SAID =
  /the feed has no replication-(\d+)\.tar\.bz2 but has replication-\1-v2\.tar\.bz2: it serves the production deployment's packet names, not those of --deployment test; set --deployment production/;

it('with replication packets: the first 404 stops the sync, exit 2, naming --deployment', async () => {
  const run = await syncTest([]);
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toMatch(SAID);
  expect(run.complete).toBe(0);
}, 60_000);

it('without replication packets: the hour check stops it the same way, not "upstream may no longer hold"', async () => {
  const run = await syncTest(['--no-replication-packets']);
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toMatch(SAID);
  expect(run.stderr).not.toContain('may no longer hold');
}, 60_000);

it('production’s feed with both names: the latest packet without its plain file yet only waits', async () => {
  // As upstream copies them one after the other (FEED.md): every packet has both names, the latest
  // only its -v2 file so far. The test deployment's names work there, and nothing stops.
  const root = await tempDir('lf-deployment-feed-');
  try {
    await cp(BUNDLED_FEED_ROOT, root.dir, { recursive: true });
    const packets = (await readdir(root.dir)).flatMap((name) => {
      const match = /^replication-(\d+)-v2\.tar\.bz2$/.exec(name);
      return match ? [Number(match[1])] : [];
    });
    const latest = Math.max(...packets);
    for (const packet of packets.filter((p) => p < latest))
      for (const suffix of ['', '.asc'])
        await copyFile(
          join(root.dir, `replication-${packet}-v2.tar.bz2${suffix}`),
          join(root.dir, `replication-${packet}.tar.bz2${suffix}`),
        );
    const both = await startSampleFeed({ root: root.dir });
    try {
      const run = await syncTest([], both);
      expect(run.code, run.stderr).not.toBe(2);
      expect(run.stderr).not.toContain('serves the production deployment');
      expect(run.complete).toBeGreaterThan(0);
    } finally {
      await both.close();
    }
  } finally {
    await root.cleanup();
  }
}, 60_000);

/**
 * A copy of the bundled feed (production's names) whose replication packets `renamed` answer only
 * under the test deployment's plain name, as a test feed (or a copy that stopped copying the
 * `-v2` files) serves them.
 */
async function plainNamedFeed(root: string, renamed: (packet: number, latest: number) => boolean) {
  await cp(BUNDLED_FEED_ROOT, root, { recursive: true });
  const packets = (await readdir(root)).flatMap((name) => {
    const match = /^replication-(\d+)-v2\.tar\.bz2$/.exec(name);
    return match ? [Number(match[1])] : [];
  });
  const latest = Math.max(...packets);
  for (const packet of packets.filter((p) => renamed(p, latest)))
    for (const suffix of ['', '.asc'])
      await rename(
        join(root, `replication-${packet}-v2.tar.bz2${suffix}`),
        join(root, `replication-${packet}.tar.bz2${suffix}`),
      );
  return startSampleFeed({ root });
}

const SAID_PRODUCTION =
  /the feed has no replication-(\d+)-v2\.tar\.bz2 but has replication-\1\.tar\.bz2: it serves the test deployment's packet names, not those of --deployment production; set --deployment test/;

/** Runs `work` on a {@link plainNamedFeed} in a folder of its own, then closes and removes both. */
async function onPlainNamedFeed<T>(
  renamed: (packet: number, latest: number) => boolean,
  work: (on: SampleFeed) => Promise<T>,
): Promise<T> {
  const root = await tempDir('lf-deployment-plain-');
  const on = await plainNamedFeed(root.dir, renamed);
  try {
    return await work(on);
  } finally {
    await on.close();
    await root.cleanup();
  }
}

it('--deployment production on a feed of plain names only: stops with exit 2 naming --deployment test; without replication packets the plain names hold the hours', async () => {
  await onPlainNamedFeed(
    () => true,
    async (plain) => {
      const run = await syncTest([], plain, 'production');
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(SAID_PRODUCTION);
      expect(run.complete).toBe(0);
      // Without replication packets no name is fetched: the hours are held, and the sync completes them.
      const dumpsOnly = await syncTest(['--no-replication-packets'], plain, 'production');
      expect(dumpsOnly.code, dumpsOnly.stderr).toBe(0);
      expect(dumpsOnly.stderr).not.toContain('may no longer hold');
      expect(dumpsOnly.complete).toBeGreaterThan(0);
    },
  );
}, 90_000);

it('--deployment production: the latest packet with only its plain file so far waits, and nothing stops', async () => {
  await onPlainNamedFeed(
    (packet, latest) => packet === latest,
    async (copying) => {
      const run = await syncTest([], copying, 'production');
      expect(run.code, run.stderr).not.toBe(2);
      expect(run.stderr).not.toContain('serves the test deployment');
      expect(run.complete).toBeGreaterThan(0);
    },
  );
}, 60_000);

it('on upstream’s production host a -v2 file missing beside its plain one is no misconfiguration: only other hosts are asked', () => {
  const on = (deployment: 'production' | 'test', feedRoot: string) =>
    checksDeploymentNames({ feed: { deployment, client: { feedRoot } } } as unknown as SyncContext);
  expect(on('production', 'https://metabrainz.org/api/musicbrainz')).toBe(false);
  expect(on('production', 'https://mirror.example.org/api/musicbrainz')).toBe(true);
  expect(on('production', 'http://127.0.0.1:8080/api/musicbrainz')).toBe(true);
  expect(on('test', 'https://metabrainz.org/api/musicbrainz')).toBe(true);
  expect(on('test', 'https://test.metabrainz.org/api/musicbrainz')).toBe(true);
});

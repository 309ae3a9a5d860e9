import { copyFile, cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
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

async function syncTest(more: string[], on: SampleFeed = feed) {
  const data = await tempDir('lf-deployment-');
  try {
    const run = startCli(
      [
        'sync',
        '--once',
        ...['--feed-url', on.feedRoot, '--data-dir', data.dir, '--deployment', 'test'],
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

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../src/samplefeed/server.js';
import { REPO_ROOT, startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';

/**
 * Issue 16, "start only what a command needs": the real `livefeed` process, with a module hook that
 * records every module it loads (test/support/moduleLog.mjs).
 */
const HOOK = join(REPO_ROOT, 'test/support/moduleLog.mjs');

let runs = 0;

/** Runs the CLI to its end; resolves with its exit code, output and the repository-relative modules it loaded. */
async function runLogged(args: string[], dir: string, env: Record<string, string> = {}) {
  const log = join(dir, `modules-${++runs}.log`);
  const cli = startCli(args, { ...env, MODULE_LOG: log }, ['--import', HOOK]);
  const { code } = await cli.exited;
  const modules = readFileSync(log, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file://'))
    .map((url) => url.slice(`file://${REPO_ROOT}`.length));
  return { code, output: [...cli.stdout, ...cli.stderr].join('\n'), modules };
}

/** Modules of the PostgreSQL store and its driver (issue 17): loaded only for a postgres:// --db. */
const postgresModules = (modules: string[]) =>
  modules.filter((m) => /^src\/.*\/postgres\//.test(m) || /node_modules\/(pg|pg-copy-streams)\//.test(m));

/** Modules of the GraphQL and HTTP server stack. */
const serverModules = (modules: string[]) =>
  modules.filter((m) => /^src\/(graphql|http)\//.test(m) || /node_modules\/graphql-yoga\//.test(m));

describe('commands load only what they need', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
  });
  afterAll(async () => {
    await feed?.close();
    await data?.cleanup();
  });

  it('sync --once stores a packet without loading the GraphQL or HTTP server', async () => {
    const args = ['sync', '--once', '--feed-url', feed.feedRoot, '--data-dir', data.dir];
    const run = await runLogged(
      [...args, '--to', '186100', '--from', '186100', '--entities', 'area'],
      data.dir,
      {
        LIVEFEED_TOKEN: SAMPLE_TOKEN,
      },
    );
    expect(run.code, run.output).toBe(0);
    // The log saw the sync at work: the hook records what it should.
    expect(run.modules).toContain('src/sync/worker.ts');
    expect(serverModules(run.modules)).toEqual([]);
    expect(postgresModules(run.modules)).toEqual([]);
    // Without a webhooks file, the YAML parser is not imported either.
    expect(run.modules).toContain('src/config/webhooksFile.ts');
    expect(run.modules.filter((m) => /node_modules\/yaml\//.test(m))).toEqual([]);
  });

  it('import stores a dump without loading the GraphQL or HTTP server', async () => {
    const file = join(BUNDLED_FEED_ROOT, 'json-dumps/json-dump-186100/label.tar.xz');
    const db = join(data.dir, 'import.db');
    const run = await runLogged(['import', file, '--packet', '186100', '--db', db], data.dir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/imported .* as packet 186100 label/);
    expect(run.modules).toContain('src/sync/import.ts');
    expect(serverModules(run.modules)).toEqual([]);
    expect(postgresModules(run.modules)).toEqual([]);
  });

  it('--help of a command lists its flags without loading any command', async () => {
    const run = await runLogged(['sync', '--help'], data.dir);
    expect(run.code, run.output).toBe(0);
    for (const flag of ['--once', '--demo', '--signing-key', '--accept-unsigned', '--feed-url']) {
      expect(run.output).toContain(flag);
    }
    const commandFiles = ['sync', 'serve', 'start', 'status', 'import', 'bootstrap', 'sampleFeed'];
    expect(run.modules.filter((m) => commandFiles.some((c) => m === `src/cli/${c}.ts`))).toEqual([]);
  });
});

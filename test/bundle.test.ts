import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import type { Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli } from '../scripts/bundle.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../src/samplefeed/server.js';
import { cliEnv, REPO_ROOT } from './support/cli.js';
import { startReceiver, verifySignature } from './support/webhookReceiver.js';

/**
 * Issue 16, start-up: the CLI as bin/livefeed.js runs it after `npm run build`, the esbuild bundle of
 * scripts/bundle.ts, built here into a temporary folder and run as a process.
 */
const run = promisify(execFile);

/** Inputs of the outputs `entry` loads before running (static imports, transitively). */
function staticInputs(meta: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (output: string) => {
    if (seen.has(output)) return;
    seen.add(output);
    for (const imported of meta.outputs[output]!.imports) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(entry);
  return [...seen].flatMap((output) => Object.keys(meta.outputs[output]!.inputs));
}

describe('the bundled CLI', () => {
  let out: { dir: string; cleanup: () => Promise<void> };
  let meta: Metafile;
  let main: string;
  let feed: SampleFeed;
  beforeAll(async () => {
    // Inside the repository, as dist/bundle is: the native addons' packages resolve from node_modules.
    await mkdir(join(REPO_ROOT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(join(REPO_ROOT, '.tmp', 'bundle-'));
    out = { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
    meta = await bundleCli({ outdir: out.dir, sourcemap: false });
    main = join(out.dir, 'livefeed.mjs');
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  }, 120_000);
  afterAll(async () => {
    await feed?.close();
    await out?.cleanup();
  });

  /** The output file of the chunk of command module `src/cli/<name>.ts` (its dynamic import). */
  const commandChunk = (name: string) => {
    const entry = Object.entries(meta.outputs).find(([, o]) => o.entryPoint === `src/cli/${name}.ts`);
    if (!entry) throw new Error(`no chunk for src/cli/${name}.ts`);
    return entry[0];
  };
  const mainOutput = () => relative(process.cwd(), main);

  it('loads for sync neither the GraphQL and HTTP server, nor the PostgreSQL store, nor the metrics registry', () => {
    const inputs = [...staticInputs(meta, mainOutput()), ...staticInputs(meta, commandChunk('sync'))];
    expect(inputs).toContain('src/sync/worker.ts');
    const server = inputs.filter((i) => /^src\/(graphql|http)\//.test(i) || /node_modules\/graphql/.test(i));
    const postgres = inputs.filter((i) => /^src\/.*\/postgres\//.test(i) || /node_modules\/pg/.test(i));
    expect(server).toEqual([]);
    expect(postgres).toEqual([]);
    // A sync alone serves no /metrics: prom-client comes with the server (ops/wiring.ts createOps).
    expect(inputs.filter((i) => /node_modules\/prom-client\//.test(i))).toEqual([]);
    // The server is bundled still, behind `serve`'s import.
    expect(staticInputs(meta, commandChunk('serve'))).toContain('src/http/app.ts');
  });

  it('loads before any command (for --help, --version, and ahead of each command) only the CLI, its configuration and their parsers', () => {
    const inputs = staticInputs(meta, mainOutput());
    expect(inputs).toContain('src/config/load.ts');
    // The error classes cli/exit.ts maps to exit codes live apart from the modules that throw them.
    const packages = new Set(inputs.flatMap((i) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(i)?.[1] ?? []));
    expect([...packages].sort()).toEqual(['commander', 'zod']);
  });

  it('prints its version from package.json (paths resolve against the repository root)', async () => {
    const { stdout } = await run(process.execPath, [main, '--version'], { cwd: REPO_ROOT, env: cliEnv() });
    const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
    expect(stdout.trim()).toBe(version);
  });

  it('syncs a packet of the sample feed into a new database (migrations found)', async () => {
    const data = join(out.dir, 'data');
    const args = ['sync', '--once', '--feed-url', feed.feedRoot, '--data-dir', data];
    await run(process.execPath, [main, ...args, '--from', '186100', '--to', '186100', '--entities', 'area'], {
      cwd: out.dir,
      env: cliEnv({ LIVEFEED_TOKEN: SAMPLE_TOKEN }),
    });
    const db = new Database(join(data, 'livefeed.db'), { readonly: true });
    try {
      const dump = db
        .prepare("SELECT change_count AS changes FROM dumps WHERE packet = 186100 AND entity = 'area'")
        .get() as { changes: number };
      expect(dump.changes).toBeGreaterThan(0);
      expect(db.prepare('SELECT count(*) FROM changes').pluck().get()).toBe(dump.changes);
    } finally {
      db.close();
    }
  }, 60_000);

  it('reads a YAML webhooks file (a CommonJS parser loaded on demand) and delivers to it', async () => {
    const receiver = await startReceiver();
    try {
      const secret = 'bundle-test-secret-0123456789';
      const file = join(out.dir, 'hooks.yaml');
      await writeFile(file, `- url: ${receiver.url}\n  secret: ${secret}\n  entities: [AREA]\n`);
      const args = ['sync', '--once', '--feed-url', feed.feedRoot, '--data-dir', join(out.dir, 'hooked')];
      await run(
        process.execPath,
        [main, ...args, '--from', '186100', '--to', '186101', '--entities', 'area', '--webhooks-file', file],
        { cwd: out.dir, env: cliEnv({ LIVEFEED_TOKEN: SAMPLE_TOKEN }) },
      );
      const posts = receiver.posts.filter((post) => post.status === 204);
      expect(posts.length).toBeGreaterThan(0);
      for (const post of posts)
        expect(verifySignature(secret, post.body, post.headers['x-livefeed-signature'] as string)).toBe(true);
      const edges = receiver.accepted().flatMap((body) => body.edges);
      expect(edges.length).toBeGreaterThan(0);
      expect(edges.every((edge) => edge.node.type === 'AREA')).toBe(true);
    } finally {
      await receiver.close();
    }
  }, 60_000);
});

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/harness.js';
import { readBundledManifest } from './support/manifest.js';

const run = promisify(execFile);
const ENABLED = process.env.LIVEFEED_TEST_BINARY === '1';
const manifest = readBundledManifest();

if (!ENABLED)
  console.info('binary test skipped: set LIVEFEED_TEST_BINARY=1 (builds dist/livefeed, about a minute)');

/** Environment of a machine with no Node project: no npm or NODE_* variables, a private cache folder. */
function bareEnv(cache: string): NodeJS.ProcessEnv {
  return {
    PATH: '/usr/bin:/bin',
    HOME: cache,
    LIVEFEED_CACHE_DIR: join(cache, 'livefeed'),
    LIVEFEED_LOG_LEVEL: 'info',
  };
}

/** Starts the binary and resolves with its port once it logs `listening` (port 0: the system chooses). */
function startServer(
  bin: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(bin, [...args, '--port', '0'], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const line = buffer.split('\n').find((l) => l.includes('"event":"listening"'));
      if (line) resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code} before listening:\n${buffer}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe.skipIf(!ENABLED)('dist/livefeed, the single executable', () => {
  let folder: Awaited<ReturnType<typeof tempDir>>;
  let bin: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const built = process.env.LIVEFEED_BINARY ?? join(process.cwd(), 'dist', 'livefeed');
    if (!process.env.LIVEFEED_BINARY) {
      await run('npx', ['tsx', 'scripts/build-binary.ts', '--out', built], {
        timeout: 600_000,
        maxBuffer: 1 << 24,
      });
    }
    // An empty folder with nothing but the binary: no node_modules, no sources, no fixtures.
    folder = await tempDir('livefeed-binary-');
    bin = join(folder.dir, 'livefeed');
    copyFileSync(built, bin);
    env = bareEnv(join(folder.dir, 'home'));
  }, 660_000);
  afterAll(() => folder?.cleanup());

  it('prints its version', async () => {
    const { stdout } = await run(bin, ['--version'], { cwd: folder.dir, env });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(existsSync(join(folder.dir, 'node_modules'))).toBe(false);
  });

  it('syncs the embedded demo feed into ./data', async () => {
    await run(bin, ['sync', '--once', '--demo', '--no-replication-packets'], { cwd: folder.dir, env });
    expect(existsSync(join(folder.dir, 'data', 'demo.db'))).toBe(true);
    const { stdout } = await run(bin, ['status', '--offline', '--demo'], { cwd: folder.dir, env });
    // The newest packet waits: its missing JSON dumps settle only once a later packet's dump is seen.
    expect(stdout).toContain(`latest complete packet ${manifest.lastPacket - 1}`);
  }, 120_000);

  it('serves that database (migrations embedded, GraphiQL inline)', async () => {
    const { child, port } = await startServer(bin, ['serve', '--db', 'data/demo.db'], folder.dir, env);
    try {
      const ready = await fetch(`http://127.0.0.1:${port}/ready`);
      expect([ready.status, await ready.text()]).toEqual([200, 'ready\n']);
      const answer = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ latestPacket { number } }' }),
      });
      expect(await answer.json()).toEqual({ data: { latestPacket: { number: manifest.lastPacket - 1 } } });
      const graphiql = await fetch(`http://127.0.0.1:${port}/graphql`, { headers: { accept: 'text/html' } });
      expect(await graphiql.text()).toContain('renderYogaGraphiQL');
    } finally {
      expect(await stop(child)).toBe(0);
    }
  }, 60_000);

  it('stores in SQLite only: a postgres:// --db is refused (exit 2), naming the database without its password', async () => {
    const error = await run(
      bin,
      ['import', 'label.tar.xz', '--packet', '1', '--db', 'postgres://u:not-shown@127.0.0.1:1/db'],
      {
        cwd: folder.dir,
        env,
      },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toContain(
      'cannot use PostgreSQL postgres://u:***@127.0.0.1:1/db: this livefeed has no PostgreSQL migrations',
    );
    expect((error as { stderr: string }).stderr).not.toContain('not-shown');
  });

  it('starts (sync and serve) in a fresh folder', async () => {
    const fresh = await tempDir('livefeed-binary-start-');
    try {
      const { child, port } = await startServer(bin, ['start', '--no-replication-packets'], fresh.dir, env);
      try {
        let text = '';
        for (let i = 0; i < 600 && !text.startsWith('ready'); i++) {
          text = await (await fetch(`http://127.0.0.1:${port}/ready`)).text();
          if (!text.startsWith('ready')) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(text).toBe('ready\n');
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        expect(metrics).toMatch(/^livefeed_local_latest_packet \d+$/m);
      } finally {
        expect(await stop(child)).toBe(0);
      }
    } finally {
      await fresh.cleanup();
    }
  }, 120_000);
});

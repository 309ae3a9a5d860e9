import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, REPO_ROOT } from './support/cli.js';
import { tempDir } from './support/harness.js';

/**
 * The Dockerfile's stages replayed without Docker (CI has no daemon): each stage's `COPY` lines put
 * the files they name into a folder of their own, the build stage runs `npm run build` there, and
 * the runtime stage's folder runs bin/livefeed.js. A file the build reads but the build stage does
 * not copy (scripts/bundle.ts once) fails here instead of in `docker build`. Installing is not
 * replayed: both folders use this clone's node_modules.
 */
const run = promisify(execFile);

interface Copy {
  from: string | undefined;
  sources: string[];
  target: string;
}

/** The `COPY` lines of each stage (`FROM ... AS name`), in order; the runtime stage is unnamed. */
function stages(dockerfile: string): Map<string, Copy[]> {
  const found = new Map<string, Copy[]>();
  let current: Copy[] = [];
  for (const line of dockerfile.split('\n')) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      current = [];
      found.set(from[1] ?? 'runtime', current);
      continue;
    }
    const copy = /^COPY\s+(?:--from=(\S+)\s+)?(.+)$/i.exec(line);
    if (!copy) continue;
    const words = copy[2]!.trim().split(/\s+/);
    current.push({ from: copy[1], sources: words.slice(0, -1), target: words.at(-1)! });
  }
  return found;
}

/** Replays `copies` into `dir` (the image's WORKDIR), taking `--from=build` files from `built`. */
async function replay(copies: Copy[], dir: string, built: string): Promise<void> {
  for (const { from, sources, target } of copies) {
    for (const source of sources) {
      // Paths of another stage are absolute in it (its WORKDIR is /app).
      const origin = from === 'build' ? join(built, source.replace(/^\/app\//, '')) : join(REPO_ROOT, source);
      // `COPY a b ./` puts each into ./; `COPY dir ./dir` copies the folder as ./dir.
      const into = target.endsWith('/') ? posix.join(target, posix.basename(source)) : target;
      const destination = join(dir, into);
      await mkdir(dirname(destination), { recursive: true });
      await cp(origin, destination, { recursive: true });
    }
  }
}

describe('the Dockerfile', () => {
  let temp: { dir: string; cleanup: () => Promise<void> };
  let copies: Map<string, Copy[]>;

  beforeAll(async () => {
    temp = await tempDir('lf-docker-');
    copies = stages(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  });
  afterAll(() => temp?.cleanup());

  it('builds from what its build stage copies, and its runtime stage starts the CLI', async () => {
    expect([...copies.keys()]).toEqual(['build', 'runtime']);
    const build = join(temp.dir, 'build');
    await mkdir(build);
    await replay(copies.get('build')!, build, build);
    await symlink(join(REPO_ROOT, 'node_modules'), join(build, 'node_modules'));
    await run('npm', ['run', 'build'], { cwd: build, env: cliEnv() });
    expect(existsSync(join(build, 'dist', 'bundle', 'livefeed.mjs'))).toBe(true);

    const runtime = join(temp.dir, 'runtime');
    await mkdir(runtime);
    // node_modules comes from the build stage in the image; here it is this clone's.
    await replay(
      copies.get('runtime')!.filter((c) => !c.sources.includes('/app/node_modules')),
      runtime,
      build,
    );
    await symlink(join(REPO_ROOT, 'node_modules'), join(runtime, 'node_modules'));
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const { stdout } = await run(process.execPath, ['bin/livefeed.js', '--version'], {
      cwd: runtime,
      env: cliEnv(),
    });
    expect(stdout.trim()).toBe(version);
    // The demo the image runs without a token: its feed, key and migrations are in the image.
    const data = join(temp.dir, 'data');
    await run(process.execPath, ['bin/livefeed.js', 'sync', '--demo', '--once', '--data-dir', data], {
      cwd: runtime,
      env: cliEnv(),
    });
    expect(existsSync(join(data, 'demo.db'))).toBe(true);
  }, 180_000);
});

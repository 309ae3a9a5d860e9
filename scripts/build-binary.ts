/**
 * `npm run build:binary`: writes `dist/livefeed`, one executable file that runs livefeed with no
 * Node.js install and no node_modules (Node's single executable applications, Node 20):
 *
 * 1. esbuild bundles `src/cli/main.ts` and its dependencies into ES modules. Each source module's
 *    `import.meta.url` becomes the URL it has under `dist/` of the extraction folder, so relative
 *    paths (`../../drizzle/sqlite`, `../../fixtures/feed`, `../../package.json`) work unchanged. `bindings`
 *    and `node-gyp-build` are replaced by a loader of the embedded native addons.
 * 2. The bundle, the native addons (better-sqlite3, lzma-native), the SQLite drizzle migrations, the demo
 *    feed and its public test key become SEA assets, with a manifest naming them and their hash.
 * 3. `node --experimental-sea-config` makes the blob; postject injects it into a copy of this
 *    Node binary. At run time scripts/sea/main.cjs extracts the assets once (keyed by hash) and
 *    imports the app.
 *
 * Options: `--out <file>` (default dist/livefeed). Prints the size of the result.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { Plugin } from 'esbuild';
import { bundleCli, ROOT } from './bundle.js';

const require = createRequire(import.meta.url);
/** postject's sentinel for Node's single executable applications (Node 20 docs). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** Native addons to embed: name used by the loader → the `.node` file Node would load here. */
function nativeAddons(): Record<string, string> {
  const sqlite = join(
    dirname(require.resolve('better-sqlite3/package.json')),
    'build',
    'Release',
    'better_sqlite3.node',
  );
  const lzmaDir = dirname(require.resolve('lzma-native/package.json'));
  const lzma = (require('node-gyp-build') as { resolve(dir: string): string }).resolve(lzmaDir);
  return { better_sqlite3: sqlite, lzma_native: lzma };
}

/** Files under `dir` (recursive), as paths relative to ROOT with `/` separators. */
function listFiles(dir: string, keep: (rel: string) => boolean = () => true): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...listFiles(rel, keep));
    else if (keep(rel)) out.push(rel);
  }
  return out;
}

/**
 * `bindings` (better-sqlite3) and lzma-native's `node-gyp-build` call → the embedded addons. Any
 * other `node-gyp-build` user fails loudly: its addon is not embedded.
 */
const nativePlugin: Plugin = {
  name: 'livefeed-native',
  setup(b) {
    b.onLoad({ filter: /[\\/]lzma-native[\\/]index\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const call = "require('node-gyp-build')(__dirname)";
      if (!text.includes(call)) throw new Error(`${args.path}: no ${call} to replace (lzma-native changed?)`);
      return { contents: text.replace(call, 'globalThis.__livefeedNative("lzma_native")'), loader: 'js' };
    });
    b.onResolve({ filter: /^(bindings|node-gyp-build)$/ }, (args) => ({
      path: args.path,
      namespace: 'livefeed-native',
    }));
    b.onLoad({ filter: /.*/, namespace: 'livefeed-native' }, (args) => ({
      loader: 'js',
      contents:
        args.path === 'bindings'
          ? 'module.exports = (name) => globalThis.__livefeedNative(String(name).replace(/\\.node$/, ""));'
          : 'module.exports = (dir) => { throw new Error("native addon in " + dir + " is not embedded in this binary"); };',
    }));
  },
};

// After the bundle's own helpers (scripts/bundle.ts): the loader of the embedded native addons,
// which the extraction puts in <root>/native/.
const NATIVE_BANNER = `globalThis.__livefeedNative ??= (name) => require(__lfFileURLToPath(new URL('../native/' + name + '.node', import.meta.url)));`;

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
}

async function main(): Promise<void> {
  const outIndex = process.argv.indexOf('--out');
  const out = resolve(outIndex > 0 ? process.argv[outIndex + 1]! : join(ROOT, 'dist', 'livefeed'));
  const work = mkdtempSync(join(tmpdir(), 'livefeed-sea-'));
  const stage = join(work, 'stage');
  try {
    const started = Date.now();
    // Output files sit in <stage>/dist/, so the root is one level up.
    await bundleCli({
      outdir: join(stage, 'dist'),
      rootFromOut: '../',
      externalNatives: false,
      plugins: [nativePlugin],
      banner: NATIVE_BANNER,
      sourcemap: false,
    });
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    writeFileSync(
      join(stage, 'package.json'),
      `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module' })}\n`,
    );
    copyFileSync(join(ROOT, 'scripts', 'sea', 'boot.cjs'), join(stage, 'boot.cjs'));
    mkdirSync(join(stage, 'native'));
    for (const [name, file] of Object.entries(nativeAddons()))
      copyFileSync(file, join(stage, 'native', `${name}.node`));
    const copied = [
      ...listFiles(
        'drizzle/sqlite',
        (rel) => rel.endsWith('.sql') || rel === 'drizzle/sqlite/meta/_journal.json',
      ),
      ...listFiles('fixtures/feed'),
      'fixtures/keys/test-signing-key.asc',
    ];
    for (const rel of copied) cpSync(join(ROOT, rel), join(stage, rel));

    // Every staged file is an asset under its relative path; the manifest lists them with one hash.
    const files = listStaged(stage);
    const hash = createHash('sha256').update(process.version);
    for (const rel of files) hash.update(rel).update(readFileSync(join(stage, rel)));
    const id = `${pkg.version}-${hash.digest('hex').slice(0, 16)}`;
    writeFileSync(join(work, 'manifest.json'), JSON.stringify({ id, files }));
    const assets: Record<string, string> = { 'manifest.json': join(work, 'manifest.json') };
    for (const rel of files) assets[rel] = join(stage, rel);
    const blob = join(work, 'sea.blob');
    writeFileSync(
      join(work, 'sea-config.json'),
      JSON.stringify({
        main: join(ROOT, 'scripts', 'sea', 'main.cjs'),
        output: blob,
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: false,
        assets,
      }),
    );
    run(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')]);

    mkdirSync(dirname(out), { recursive: true });
    rmSync(out, { force: true });
    copyFileSync(process.execPath, out);
    chmodSync(out, 0o755);
    run(process.execPath, [
      require.resolve('postject/dist/cli.js'),
      out,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      SEA_FUSE,
    ]);
    const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
    const payload = files.reduce((n, rel) => n + statSync(join(stage, rel)).size, 0);
    process.stdout.write(
      `wrote ${relative(process.cwd(), out) || out}: ${mb(statSync(out).size)} (Node ${process.version} ${mb(statSync(process.execPath).size)} + ${files.length} embedded files ${mb(payload)}), id ${id}, in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function listStaged(stage: string, dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(stage, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listStaged(stage, rel));
    else out.push(rel);
  }
  return out.sort();
}

await main();

/**
 * The CLI as a few ES modules (esbuild, code splitting at every `import()`), for `bin/livefeed.js`
 * and the single binary (scripts/build-binary.ts). Node loads one file per chunk instead of about
 * 340 modules of dist/ and node_modules: `import` of the `sync` command took 430 ms from dist/
 * against about 200 ms from the bundle (bench/RESULTS.md, issue 16), start-up that every command
 * pays before its work. Commands stay split as src/cli/commands.ts loads them: `sync` loads no
 * GraphQL, HTTP server or PostgreSQL chunk.
 *
 * `npm run build` runs this after `tsc` (`tsx scripts/bundle.ts`, writes dist/bundle/).
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** Where `npm run build` writes the bundle; bin/livefeed.js loads `livefeed.mjs` from there. */
export const BUNDLE_DIR = join(ROOT, 'dist', 'bundle');

/**
 * Each source module's `import.meta.url` becomes `__livefeedModuleUrl("dist/<path>.js")`: the URL it
 * has under dist/ of the root, so its paths relative to itself (`../../drizzle/sqlite`,
 * `../../package.json`, `../../fixtures/feed`) name the same files as from dist/.
 */
const moduleUrlPlugin: Plugin = {
  name: 'livefeed-module-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(SRC + sep)) return undefined;
      const rel = `dist/${relative(SRC, args.path).split(sep).join('/').replace(/\.ts$/, '.js')}`;
      const text = readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        `__livefeedModuleUrl(${JSON.stringify(rel)})`,
      );
      return { contents: text, loader: 'ts' };
    });
  },
};

/** What {@link bundleCli} writes and how. */
export interface BundleOptions {
  /** Folder of the output (`livefeed.mjs` and its chunks); its files are replaced. */
  outdir: string;
  /**
   * The root the modules' relative paths resolve against (the folder holding `dist/`,
   * `drizzle/`, `fixtures/`, `package.json`), as a path relative to `outdir` with `/` separators.
   * Default: the repository root as seen from `outdir`.
   */
  rootFromOut?: string;
  /**
   * True (default): the native addons' packages (better-sqlite3, lzma-native) stay imports of
   * node_modules. False bundles them, for a plugin that loads their addons otherwise (the binary).
   */
  externalNatives?: boolean;
  /** More plugins (the binary's loader of embedded native addons). */
  plugins?: Plugin[];
  /** JavaScript added after the banner's helpers, at the top of every chunk. */
  banner?: string;
  /** Source maps beside the chunks (default true). */
  sourcemap?: boolean;
}

/**
 * Bundles src/cli/main.ts into `options.outdir` (`livefeed.mjs`, chunks `<name>-<hash>.mjs`, source
 * maps beside them). Returns esbuild's metafile (inputs and imports of each output).
 * @throws esbuild's error when a module does not compile or resolve
 */
export async function bundleCli(options: BundleOptions): Promise<Metafile> {
  const rootFromOut = options.rootFromOut ?? `${relative(options.outdir, ROOT).split(sep).join('/') || '.'}/`;
  // CommonJS globals for the bundled CommonJS packages, the root of __livefeedModuleUrl, and
  // NODE_ENV as bin/livefeed.js sets it, before any chunk's graphql code runs.
  const banner = `process.env.NODE_ENV ??= 'production';
import { createRequire as __lfCreateRequire } from 'node:module';
import { fileURLToPath as __lfFileURLToPath } from 'node:url';
import { dirname as __lfDirname } from 'node:path';
const require = __lfCreateRequire(import.meta.url);
const __filename = __lfFileURLToPath(import.meta.url);
const __dirname = __lfDirname(__filename);
const __livefeedModuleUrl = (rel) => new URL(rel, new URL(${JSON.stringify(rootFromOut)}, import.meta.url)).href;
${options.banner ?? ''}`;
  const natives = options.externalNatives === false ? [] : ['better-sqlite3', 'lzma-native'];
  const result = await build({
    entryPoints: { livefeed: join(SRC, 'cli', 'main.ts') },
    outdir: options.outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    keepNames: true,
    sourcemap: options.sourcemap === false ? false : 'linked',
    // The maps point at the files in src/ and node_modules/ instead of holding them (34 MB otherwise).
    sourcesContent: false,
    legalComments: 'none',
    banner: { js: banner },
    plugins: [moduleUrlPlugin, ...(options.plugins ?? [])],
    // pg's optional native binding is never installed; the driver falls back to JavaScript.
    external: [...natives, 'pg-native'],
    metafile: true,
    logLevel: 'warning',
  });
  return result.metafile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  await bundleCli({ outdir: BUNDLE_DIR });
}

// Entry point of the single executable (`npm run build:binary`; Node's single executable
// applications). It may require only Node's built-in modules. It extracts the embedded files (the
// bundled app, native addons, migrations, the demo feed) once into a cache folder keyed by their
// hash, then loads the app from there: native addons must be files for process.dlopen, and the
// migrations and demo feed are read as folders.
'use strict';
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const { createRequire } = require('node:module');
const os = require('node:os');
const path = require('node:path');
const sea = require('node:sea');

const manifest = JSON.parse(sea.getAsset('manifest.json', 'utf8'));

function cacheBase() {
  if (process.env.LIVEFEED_CACHE_DIR) return process.env.LIVEFEED_CACHE_DIR;
  const xdg = process.env.XDG_CACHE_HOME || (os.homedir() ? path.join(os.homedir(), '.cache') : '');
  return xdg
    ? path.join(xdg, 'livefeed')
    : path.join(os.tmpdir(), `livefeed-${process.getuid?.() ?? 'user'}`);
}

/**
 * True when `dir` exists or was made, is ours and only we may write to it: the app is loaded from
 * there, so a folder another user could have planted (in /tmp) is refused.
 */
function safeFolder(dir) {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.accessSync(dir, fs.constants.W_OK);
    const st = fs.statSync(dir);
    return process.getuid === undefined || (st.uid === process.getuid() && (st.mode & 0o022) === 0);
  } catch {
    return false;
  }
}

/** Extracts every asset into `<base>/<hash>` unless a complete copy is there; returns that folder. */
function extract() {
  let base = cacheBase();
  if (!safeFolder(base)) base = path.join(os.tmpdir(), `livefeed-${process.getuid?.() ?? 'user'}`);
  if (!safeFolder(base))
    throw new Error(`no private writable cache folder (tried ${cacheBase()} and ${base})`);
  const root = path.join(base, manifest.id);
  if (fs.existsSync(path.join(root, '.complete'))) return root;
  const tmp = `${root}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  for (const file of manifest.files) {
    const target = path.join(tmp, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, new Uint8Array(sea.getAsset(file)));
  }
  fs.writeFileSync(path.join(tmp, '.complete'), `${manifest.id}\n`);
  try {
    fs.renameSync(tmp, root);
  } catch (error) {
    // Another process extracted the same files first (the folder appears whole, by rename).
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(root, '.complete'))) throw error;
  }
  return root;
}

let root;
try {
  root = extract();
} catch (error) {
  process.stderr.write(
    `livefeed: cannot extract the embedded files (set LIVEFEED_CACHE_DIR to a writable folder): ${error.message}\n`,
  );
  process.exit(4);
}
// The app is an ES module: boot.cjs (a real file, so dynamic import works) imports it.
createRequire(path.join(root, 'boot.cjs'))('./boot.cjs');

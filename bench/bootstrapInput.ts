/**
 * The input of the full dump bootstrap benchmark (bench/bootstrap.ts, issue 14): a signed full dump
 * directory as the sample feed serves it (`<feed>/full-json-dumps/LATEST`,
 * `<feed>/full-json-dumps/<dump>/recording.tar.xz` and `.asc`), built once per line count under
 * bench/out/bootstrap-input-<lines>/ and reused by later runs (the 1M-line archive takes minutes).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import tar from 'tar-stream';
import { createTestKeyHome, signFile } from '../test/support/archives.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the benchmark keeps its inputs and the databases it makes (git-ignored). */
export const BENCH_OUT = join(ROOT, 'bench', 'out');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** Full dump directory name and its REPLICATION_SEQUENCE. */
export const DUMP = '20260101-001';
export const PACKET = 190000;
/** Bumped when the generated lines change, so that a cached archive of an older shape is rebuilt. */
const SHAPE = 2;

/** A built input: its feed root for the sample feed, sizes, and a spread of its MBIDs. */
export interface BootstrapInput {
  feedRoot: string;
  archive: string;
  lines: number;
  /** Bytes of `mbdump/recording` (the uncompressed lines, newlines included). */
  uncompressedBytes: number;
  archiveBytes: number;
  /** 1,000 MBIDs spread over the dump (every n-th line's `id`), for the read figures. */
  mbids: string[];
  shape: number;
}

/** The recording sample lines (several KB each): the dump is `recording.tar.xz`. */
function recordingSamples(): string[] {
  const shared = '/work/shared/samples/recording.jsonl';
  const file = existsSync(shared) ? shared : join(ROOT, 'fixtures/samples/recording.jsonl');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

/** Member `mbdump/recording`: `count` sample lines in a scrambled cycle, every UUID fresh (same byte length). */
function shapedLines(count: number, samples: string[]) {
  const pick = (i: number) => samples[(i * 7919) % samples.length]!;
  let bytes = 0;
  for (let i = 0; i < count; i++) bytes += Buffer.byteLength(pick(i)) + 1;
  const every = Math.max(1, Math.floor(count / 1000));
  const mbids: string[] = [];
  async function* chunks(): AsyncGenerator<string> {
    let chunk = '';
    for (let i = 0; i < count; i++) {
      const line = pick(i).replace(UUID, () => randomUUID());
      if (i % every === 0) mbids.push((JSON.parse(line) as { id: string }).id);
      chunk += `${line}\n`;
      if (chunk.length >= 1 << 20) {
        yield chunk;
        chunk = '';
      }
    }
    if (chunk) yield chunk;
  }
  return { bytes, mbids, chunks };
}

/**
 * Writes the tar stream (upstream's member order, FEED.md) through `xz -1` into `out`. Level 1, not
 * upstream's, keeps building 3 GB of lines to minutes on a shared machine; the floor and livefeed
 * read the same file, and a single-threaded xz writes one block, so neither decompresses in threads.
 */
async function writeArchive(out: string, lines: ReturnType<typeof shapedLines>, count: number) {
  const pack = tar.pack();
  const mtime = new Date('2026-01-01T00:00:00Z');
  const small = (name: string, text: string) => pack.entry({ name, mtime, mode: 0o644 }, text);
  const xz = spawn('xz', ['-1', '-T1', '-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const written = pipeline(xz.stdout, createWriteStream(out));
  const compressed = pipeline(pack, xz.stdin);
  small('TIMESTAMP', '2026-01-01 00:00:00.000000+00\n');
  small(
    'COPYING',
    'The data in this archive is MusicBrainz data, placed in the public domain under CC0 1.0.\n',
  );
  small('README', 'A generated full JSON dump for the livefeed benchmark; not an upstream file.\n');
  small('REPLICATION_SEQUENCE', `${PACKET}\n`);
  small('SCHEMA_SEQUENCE', '31\n');
  const entry = pack.entry({ name: 'mbdump/recording', size: lines.bytes, mtime, mode: 0o644 });
  await pipeline(lines.chunks(), entry);
  small('JSON_DUMPS_SCHEMA_NUMBER', '1\n');
  pack.finalize();
  await Promise.all([compressed, written]);
  const code = xz.exitCode ?? (await new Promise((done) => xz.once('close', done)));
  if (code !== 0) throw new Error(`xz exited with ${code} while building ${out} (${count} lines)`);
}

/**
 * The input of `lines` lines: reused from bench/out when a complete earlier build is there, else
 * built (lines, tar, xz, a signature by the test key, LATEST) and recorded in `input.json` last.
 */
export async function bootstrapInput(lines: number, log: (text: string) => void): Promise<BootstrapInput> {
  const dir = join(BENCH_OUT, `bootstrap-input-${lines}`);
  const record = join(dir, 'input.json');
  if (existsSync(record)) {
    const input = JSON.parse(readFileSync(record, 'utf8')) as BootstrapInput;
    if (input.shape === SHAPE && existsSync(input.archive)) return input;
  }
  await rm(dir, { recursive: true, force: true });
  const feedRoot = join(dir, 'feed');
  const folder = join(feedRoot, 'full-json-dumps', DUMP);
  await mkdir(folder, { recursive: true });
  const archive = join(folder, 'recording.tar.xz');
  log(`building a full dump of ${lines} lines (xz -1; cached in ${dir}) ...`);
  const shaped = shapedLines(lines, recordingSamples());
  await writeArchive(`${archive}.partial`, shaped, lines);
  await rename(`${archive}.partial`, archive);
  const keys = await createTestKeyHome();
  try {
    await signFile(archive, keys);
  } finally {
    await keys.close();
  }
  await writeFile(join(feedRoot, 'full-json-dumps', 'LATEST'), `${DUMP}\n`);
  const input: BootstrapInput = {
    feedRoot,
    archive,
    lines,
    uncompressedBytes: shaped.bytes,
    archiveBytes: statSync(archive).size,
    mbids: shaped.mbids,
    shape: SHAPE,
  };
  await writeFile(record, `${JSON.stringify(input)}\n`);
  return input;
}

import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeJsonDump } from '../test/support/archives.js';
import { artistRow, type FixtureRow, writeReplicationPacket } from '../test/support/replicationArchives.js';

/**
 * Inputs of `npm run bench`, built from the committed sample lines (fixtures/samples/*.jsonl) into
 * bench/out/ with the real tar, xz and bzip2. Building the large dump takes about two minutes on
 * the 2-core reference machine (xz -6 single-threaded), so built inputs are kept and reused while
 * `inputs.json` records the same recipe; `--rebuild` forces a fresh build.
 */

const SAMPLES = fileURLToPath(new URL('../fixtures/samples/', import.meta.url));
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Bumped whenever the recipe changes, so stale inputs are rebuilt. */
const RECIPE_VERSION = 3;

/** The built inputs. Sizes are bytes; `members` are decompressed `mbdump/<entity>` sizes. */
export interface BenchInputs {
  /** The large dump: ≥ 200 MB of sample-shaped lines. */
  big: DumpInput;
  /** The same shape at a tenth of the size (RSS independent of dump size). */
  small: DumpInput;
  /** Sample lines plus multi-megabyte release lines (RSS independent of line length). */
  longLines: DumpInput;
  /** A v2 replication packet. */
  packet: { path: string; packet: number; rows: number; bytes: number; tarBytes: number };
}

/** One built JSON dump archive. */
export interface DumpInput {
  path: string;
  packet: number;
  entity: 'recording' | 'release';
  lines: number;
  memberBytes: number;
  bytes: number;
  /** Bytes of the longest line. */
  longestLine: number;
}

function sampleLines(): string[] {
  return readdirSync(SAMPLES)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .flatMap((name) => readFileSync(join(SAMPLES, name), 'utf8').split('\n'))
    .filter((line) => line.trim() !== '');
}

/** Every UUID of `line` replaced by a fresh random one (so that xz sees real-data entropy). */
function freshUuids(line: string): string {
  return line.replace(UUID, () => randomUUID());
}

/** Sample lines in a shuffled cycle, fresh UUIDs each, until `targetBytes` (UTF-8, with `\n`) are written. */
function* shapedLines(targetBytes: number, counter: { lines: number; bytes: number }): Generator<string> {
  const samples = sampleLines();
  let i = 0;
  while (counter.bytes < targetBytes) {
    // 7919 is prime and coprime with the sample count: every line appears, in a scrambled order.
    const line = freshUuids(samples[(i++ * 7919) % samples.length]!);
    counter.lines++;
    counter.bytes += Buffer.byteLength(line) + 1;
    yield line;
  }
}

/** A release line whose `media` holds enough tracks to reach about `bytes` bytes. */
function longReleaseLine(bytes: number): string {
  const release = JSON.parse(sampleLines().find((line) => line.includes('"media"'))!) as Record<
    string,
    unknown
  >;
  const tracks: unknown[] = [];
  let size = JSON.stringify(release).length;
  for (let n = 1; size < bytes; n++) {
    const track = {
      id: randomUUID(),
      number: String(n),
      position: n,
      title: `Track ${n} \u2028with a line separator\u2029 and \r a carriage return \u0085`,
      length: 180000 + n,
      recording: {
        id: randomUUID(),
        title: `Recording ${n}`,
        length: 180000 + n,
        video: false,
        disambiguation: '',
      },
      'artist-credit': [
        {
          name: 'Artist',
          joinphrase: '',
          artist: { id: randomUUID(), name: 'Artist', 'sort-name': 'Artist' },
        },
      ],
    };
    tracks.push(track);
    size += JSON.stringify(track).length + 1;
  }
  release.id = randomUUID();
  release.media = [{ position: 1, format: 'Digital Media', 'track-count': tracks.length, tracks }];
  return JSON.stringify(release);
}

async function buildDump(
  root: string,
  packet: number,
  entity: DumpInput['entity'],
  lines: (counter: { lines: number; bytes: number; longest?: number }) => Iterable<string>,
): Promise<DumpInput & { longestLine: number }> {
  const counter: { lines: number; bytes: number; longest?: number } = { lines: 0, bytes: 0 };
  const built = await writeJsonDump(root, { packet, entity, lines: lines(counter) });
  const { lines: lineCount, bytes: memberBytes } = counter;
  return {
    path: built.path,
    packet,
    entity,
    lines: lineCount,
    memberBytes,
    bytes: built.bytes,
    longestLine: counter.longest ?? 0,
  };
}

function* counted(
  lines: Iterable<string>,
  counter: { lines: number; bytes: number; longest?: number },
): Generator<string> {
  for (const line of lines) {
    const bytes = Buffer.byteLength(line);
    counter.lines++;
    counter.bytes += bytes + 1;
    counter.longest = Math.max(counter.longest ?? 0, bytes);
    yield line;
  }
}

/** 100 000+ row changes: artist inserts, updates and deletes over many transactions. */
function packetRows(count: number): FixtureRow[] {
  const rows: FixtureRow[] = [];
  for (let i = 0; i < count; i++) {
    const id = 1_000_000 + i;
    const row = artistRow({
      id,
      gid: randomUUID(),
      name: `Artist ${i} \t with a tab`,
      comment: `bench row ${i}`,
    });
    const op = i % 10 === 9 ? 'd' : i % 3 === 0 ? 'u' : 'i';
    rows.push({
      xid: 5_000_000 + Math.floor(i / 20),
      table: 'musicbrainz.artist',
      op,
      oldData: op === 'i' ? null : { ...row, name: `Old ${i}` },
      newData: op === 'd' ? null : row,
    });
  }
  return rows;
}

/**
 * Builds (or reuses) the benchmark inputs under `outDir`. `scale` multiplies the big dump's size
 * (1 = 220 MB; smaller values for a quick smoke run).
 * @throws Error from tar/xz/bzip2 when a build fails.
 */
export async function buildInputs(
  outDir: string,
  options: { rebuild?: boolean; scale?: number; log?: (s: string) => void },
): Promise<BenchInputs> {
  const scale = options.scale ?? 1;
  const log = options.log ?? (() => {});
  const recipe = { version: RECIPE_VERSION, scale };
  const metaFile = join(outDir, 'inputs.json');
  if (!options.rebuild && existsSync(metaFile)) {
    const meta = JSON.parse(await readFile(metaFile, 'utf8')) as {
      recipe: typeof recipe;
      inputs: BenchInputs;
    };
    const paths = [
      meta.inputs.big.path,
      meta.inputs.small.path,
      meta.inputs.longLines.path,
      meta.inputs.packet.path,
    ];
    if (JSON.stringify(meta.recipe) === JSON.stringify(recipe) && paths.every((p) => existsSync(p)))
      return meta.inputs;
  }
  const feed = join(outDir, 'feed');
  await rm(feed, { recursive: true, force: true });
  await mkdir(feed, { recursive: true });
  const bigBytes = Math.round(220e6 * scale);
  log(`building a ${(bigBytes / 1e6).toFixed(0)} MB JSON dump (xz -6, single-threaded: about 2 minutes)`);
  const started = Date.now();
  const [big, small, longLines] = await Promise.all([
    buildDump(feed, 900001, 'recording', (c) => counted(shapedLines(bigBytes, { lines: 0, bytes: 0 }), c)),
    buildDump(feed, 900002, 'recording', (c) =>
      counted(shapedLines(bigBytes / 10, { lines: 0, bytes: 0 }), c),
    ),
    buildDump(feed, 900003, 'release', (c) =>
      counted(
        (function* () {
          const normal = { lines: 0, bytes: 0 };
          yield* shapedLines(4e6, normal);
          yield longReleaseLine(4 * 2 ** 20);
          yield* shapedLines(8e6, normal);
          yield longReleaseLine(24 * 2 ** 20);
          yield* shapedLines(12e6, normal);
        })(),
        c,
      ),
    ),
  ]);
  log(`  dumps built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const packetNumber = 900004;
  const rowCount = 100_000;
  const packetPath = await writeReplicationPacket(join(outDir, 'packets'), {
    packet: packetNumber,
    format: 'v2',
    rows: packetRows(rowCount),
  });
  const { statSync } = await import('node:fs');
  const { execFileSync } = await import('node:child_process');
  const tarBytes = Number(
    execFileSync('sh', ['-c', `bzip2 -dc '${packetPath}' | wc -c`])
      .toString()
      .trim(),
  );
  const inputs: BenchInputs = {
    big,
    small,
    longLines,
    packet: {
      path: packetPath,
      packet: packetNumber,
      rows: rowCount,
      bytes: statSync(packetPath).size,
      tarBytes,
    },
  };
  await writeFile(metaFile, `${JSON.stringify({ recipe, inputs }, null, 2)}\n`);
  return inputs;
}

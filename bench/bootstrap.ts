/**
 * `npm run bench -- --bootstrap [--lines N] [--requests N] [--runner dist|tsx] [--graphql-seconds S]
 * [--graphql-rounds R] [--reads-only]` (issue 14): a real `livefeed bootstrap` process (the compiled `dist/`, as
 * installed, by default) of a generated full dump of N real-shaped lines (default 1,000,000;
 * bench/bootstrapInput.ts, cached) from the sample feed over loopback, its signature verified with
 * the test key, against the floor (`xz -dc | tar -xO | sqlite3 .import` on the same archive); its
 * peak RSS; the database size against the uncompressed lines; and `entity(mbid)` and `resolve` of
 * 100 MBIDs against `{ __typename }` on the database it made: in process (p50 of one request at a
 * time) and over loopback HTTP (bench/load.ts, throughput). The database stays at
 * {@link bootstrapDbPath} for the benchmarks that read a large database ({@link BOOTSTRAP_1M_DB}).
 * Prints one JSON line and writes bench/out/bootstrap-<lines>.json; the figures are copied into
 * bench/RESULTS.md and the README by hand.
 */
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { startSampleFeed } from '../src/samplefeed/server.js';
import { TEST_PUBLIC_KEY_FILE } from '../test/support/archives.js';
import { BENCH_OUT, type BootstrapInput, bootstrapInput } from './bootstrapInput.js';
import { httpFigures, readFigures, readRatios } from './bootstrapReads.js';
import { LIVEFEED_CLI, LIVEFEED_ENV } from './cli.js';
import { LOAD_GENERATOR } from './load.js';
import { timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Data directory of the database a bootstrap of `lines` lines makes (bench/out/bootstrap-1m for 1M). */
export function bootstrapDataDir(lines = 1_000_000): string {
  return join(BENCH_OUT, lines % 1_000_000 === 0 ? `bootstrap-${lines / 1_000_000}m` : `bootstrap-${lines}`);
}

/** The database a bootstrap of `lines` lines makes and leaves for other benchmarks (a 1M-entity database by default). */
export function bootstrapDbPath(lines = 1_000_000): string {
  return join(bootstrapDataDir(lines), 'livefeed.db');
}

/** The 1M-entity database of `npm run bench -- --bootstrap` (recordings; exists once that ran). */
export const BOOTSTRAP_1M_DB = bootstrapDbPath();

/** The floor: the archive's lines into a one-column SQLite table with the sqlite3 shell. */
async function floorMs(input: BootstrapInput, db: string): Promise<number> {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(db + suffix, { force: true });
  const script =
    'xz -dc "$1" | tar -xO mbdump/recording | sqlite3 "$2" "CREATE TABLE t(line TEXT)" ".mode ascii" "$3" ".import /dev/stdin t"';
  const run = await timed('sh', ['-c', script, 'sh', input.archive, db, '.separator "\x1f" "\\n"']);
  const check = new Database(db, { readonly: true });
  const rows = check.prepare('SELECT count(*) FROM t').pluck().get();
  check.close();
  rmSync(db, { force: true });
  if (rows !== input.lines) throw new Error(`floor stored ${rows} rows, expected ${input.lines}`);
  return run.ms;
}

/**
 * `livefeed bootstrap` of `input`'s recording full dump into `dataDir` as a process, from the sample
 * feed on loopback, its signature checked with the test key. `entry`: the node arguments before the
 * command (bin/livefeed.js' flags and file, or the sources through tsx); `env` is added to
 * bin/livefeed.js' variables (a PostgreSQL `LIVEFEED_DB`, for bench/bootstrapPostgres.ts).
 * @throws Error when the process exits non-zero.
 */
export async function bootstrapProcess(
  input: BootstrapInput,
  dataDir: string,
  options: { entry: readonly string[]; logLevel: string; env?: NodeJS.ProcessEnv },
) {
  const feed = await startSampleFeed({ root: input.feedRoot });
  try {
    const args = [
      'bootstrap',
      '--dumps-url',
      feed.dumpsUrl,
      '--entities',
      'recording',
      '--data-dir',
      dataDir,
    ];
    return await timed(
      process.execPath,
      [...options.entry, ...args, '--signing-key', TEST_PUBLIC_KEY_FILE, '--log-level', options.logLevel],
      { env: { ...LIVEFEED_ENV, ...options.env } },
    );
  } finally {
    await feed.close();
  }
}

/**
 * Milliseconds from the start of the process to its signature check and to the entity type stored,
 * from the times of its log lines (`bootstrap-verified`, `bootstrap-entity`).
 */
function phases(run: { stdout: string; stderr: string; ms: number }, startedAt: number) {
  const at = (event: string) => {
    const line = `${run.stdout}\n${run.stderr}`.split('\n').find((l) => l.includes(`"event":"${event}"`));
    const time = line && (JSON.parse(line) as { time?: string }).time;
    return time ? Math.round(Date.parse(time) - startedAt) : null;
  };
  return {
    verifiedMs: at('bootstrap-verified'),
    storedMs: at('bootstrap-entity'),
    exitMs: Math.round(run.ms),
  };
}

/**
 * `--reads-only`: the read figures alone, on the database a previous run left (no bootstrap, no
 * floor), to measure a change of the read path without the 5–8 minutes of the import.
 * @throws Error when that database does not exist.
 */
async function readsOnly(
  mbids: string[],
  lines: number,
  values: Record<string, string | boolean | undefined>,
  log: (text: string) => void,
): Promise<Record<string, unknown>> {
  const dbPath = bootstrapDbPath(lines);
  if (!existsSync(dbPath))
    throw new Error(`${dbPath} does not exist: run npm run bench -- --bootstrap first`);
  log('entity, resolve of 100 and { __typename } ...');
  const reads = await readFigures(dbPath, bootstrapDataDir(lines), mbids, Number(values.requests));
  log(`the same over loopback HTTP (${LOAD_GENERATOR}) ...`);
  const http = await httpFigures(
    dbPath,
    mbids,
    Number(values['graphql-seconds']),
    Number(values['graphql-rounds']),
  );
  const figures = { date: new Date().toISOString(), lines, dbPath, ...readRatios(reads, http) };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  return figures;
}

/** Runs the benchmark; resolves to the figures (also printed as one JSON line). */
export async function main(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const { values } = parseArgs({
    args: argv,
    options: {
      lines: { type: 'string', default: '1000000' },
      requests: { type: 'string', default: '2000' },
      runner: { type: 'string', default: 'dist' },
      'graphql-seconds': { type: 'string', default: '5' },
      'graphql-rounds': { type: 'string', default: '3' },
      bootstrap: { type: 'boolean' },
      'reads-only': { type: 'boolean' },
    },
    strict: false,
  });
  const lines = Number(values.lines);
  const runner = String(values.runner);
  const log = (text: string) => process.stderr.write(`${text}\n`);
  const input = await bootstrapInput(lines, log);
  if (values['reads-only']) return readsOnly(input.mbids, lines, values, log);
  if (runner !== 'tsx') {
    log('compiling dist/ (npm run build) ...');
    await timed('npx', ['tsc', '-p', 'tsconfig.build.json']);
  }
  const dataDir = bootstrapDataDir(lines);
  await rm(dataDir, { recursive: true, force: true });
  log(`livefeed bootstrap of ${lines} lines (${runner}) ...`);
  const startedAt = Date.now();
  const entry = runner === 'tsx' ? ['--import', 'tsx', join(ROOT, 'src/cli/main.ts')] : [...LIVEFEED_CLI];
  const bootstrap = await bootstrapProcess(input, dataDir, { entry, logLevel: 'info' });
  const bootstrapPhases = phases(bootstrap, startedAt);
  log(`  ${JSON.stringify(bootstrapPhases)}`);
  log('floor: xz -dc | tar -xO | sqlite3 .import ...');
  const floor = await floorMs(input, join(BENCH_OUT, 'bootstrap-floor.db'));
  const dbPath = bootstrapDbPath(lines);
  const db = new Database(dbPath);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const dbBytes = statSync(dbPath).size;
  log('entity, resolve of 100 and { __typename } ...');
  const reads = await readFigures(dbPath, dataDir, input.mbids, Number(values.requests));
  log(`the same over loopback HTTP (${LOAD_GENERATOR}) ...`);
  const seconds = Number(values['graphql-seconds']);
  const http = await httpFigures(dbPath, input.mbids, seconds, Number(values['graphql-rounds']));
  const figures = {
    date: new Date().toISOString(),
    lines,
    runner,
    uncompressedBytes: input.uncompressedBytes,
    archiveBytes: input.archiveBytes,
    bootstrapMs: Math.round(bootstrap.ms),
    floorMs: Math.round(floor),
    timeVsFloor: Number((bootstrap.ms / floor).toFixed(2)),
    bootstrapPhases,
    peakRssMb: bootstrap.treeRssMb ?? null,
    dbPath,
    dbBytes,
    dbVsLines: Number((dbBytes / input.uncompressedBytes).toFixed(3)),
    ...readRatios(reads, http),
  };
  writeFileSync(join(BENCH_OUT, `bootstrap-${lines}.json`), `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  return figures;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();

/**
 * `npm run bench -- --postgres [--runs N] [--scale S] [--runner dist|tsx]` (issue 17): the big JSON
 * dump's ingest into PostgreSQL by a real `livefeed import --db postgres://...` process, against the
 * floor of the issue: the same lines streamed by `xz -dc | tar -xO` into a one-column table with
 * psql's `\copy` in CSV format, whose quote and delimiter (0x01, 0x02) never occur in the data, so
 * every line is one row byte for byte. Both run on one throw-away cluster (test/support/postgres.ts,
 * with fsync and full page writes on, as a real server commits), each run in a fresh database,
 * interleaved; the best run of each counts (target: livefeed at most 1.5 × the floor). The floor's
 * column compresses as the server's default does (pglz), which is slower than the lz4 that
 * `changes.data` uses for lines over PostgreSQL's 2 KB TOAST threshold: the floor with an lz4
 * column is reported beside it. Also the size of `changes` against the floor's table. Inputs: the
 * main benchmark's big dump (bench/inputs.ts, lines of 1.5 KB) and the real-shaped dumps of
 * `--sync-process` (bench/syncFeeds.ts, lines of 3 KB and of 6–7 KB); `--scale` builds smaller ones
 * in their own folders. Prints one JSON line and writes bench/out/postgres-<scale>.json. Needs xz,
 * tar, gpg (to build the real-shaped feeds once) and PostgreSQL (initdb, pg_ctl, psql).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openPostgresStore } from '../src/db/postgres/client.js';
import {
  POSTGRES_TEST_PASSWORD,
  type PostgresCluster,
  postgresProgram,
  startPostgres,
} from '../test/support/postgres.js';
import { LIVEFEED_CLI, LIVEFEED_ENV } from './cli.js';
import { buildInputs, type DumpInput } from './inputs.js';
import { buildSyncFeeds } from './syncFeeds.js';
import { timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'bench', 'out');

/** The table the floor copies into: one text column, as the lines arrive. */
const FLOOR_TABLE = 'floor_lines';

/** One run of the floor or of livefeed: wall milliseconds of the process (pipe), rows stored. */
export interface PostgresRun {
  ms: number;
  rows: number;
  /** Bytes of the table with its indexes and TOAST (`pg_total_relation_size`). */
  tableBytes: number;
  /** livefeed only: the seconds its own summary line reports (the import, without process start). */
  importSeconds?: number;
}

/** One input of {@link postgresBench}: a JSON dump archive and what its lines are like. */
interface PostgresInput {
  name: string;
  dump: Pick<DumpInput, 'path' | 'packet' | 'entity' | 'lines' | 'memberBytes'>;
}

/** What {@link postgresBench} measured on one input. */
export interface PostgresBenchResult {
  input: string;
  lines: number;
  memberBytes: number;
  runs: { floor: PostgresRun; floorLz4: PostgresRun; livefeed: PostgresRun }[];
  bestFloorMs: number;
  bestFloorLz4Ms: number;
  bestLivefeedMs: number;
  /** Best livefeed over best floor (target ≤ 1.5). */
  ratio: number;
  /** Best livefeed over the best floor whose column compresses with lz4, as `changes.data` does. */
  ratioLz4: number;
}

/**
 * The environment that points a `livefeed` command at the database `bare` (its URL without the
 * password) on `cluster`, the password in a file as an operator would give it
 * (`LIVEFEED_DB_PASSWORD_FILE`, README, PostgreSQL).
 */
export function livefeedDbEnv(cluster: PostgresCluster, bare: string): Record<string, string> {
  const passwordFile = join(cluster.dir, 'bench-password');
  writeFileSync(passwordFile, `${POSTGRES_TEST_PASSWORD}\n`, { mode: 0o600 });
  return { LIVEFEED_DB: bare, LIVEFEED_DB_PASSWORD_FILE: passwordFile };
}

/** A fresh database `name` on `cluster` (dropped first when left by an earlier run). */
export async function freshDatabase(
  cluster: PostgresCluster,
  name: string,
): Promise<{ url: string; bare: string }> {
  await cluster.psql('postgres', `DROP DATABASE IF EXISTS ${name}`);
  const { url, withoutPassword } = await cluster.createDatabase(name);
  return { url, bare: withoutPassword };
}

/** Rows and total size of `table` in the database at `url`. */
export async function tableFacts(url: string, table: string): Promise<{ rows: number; bytes: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ rows: string; bytes: string }>(
      `SELECT (SELECT count(*) FROM ${table}) AS rows, pg_total_relation_size('${table}') AS bytes`,
    );
    return { rows: Number(rows[0]!.rows), bytes: Number(rows[0]!.bytes) };
  } finally {
    await client.end();
  }
}

/**
 * The floor: `xz -dc | tar -xO` of the dump's data member into psql's `\copy ... FROM pstdin` in
 * CSV format with quote E'\x01' and delimiter E'\x02', into a one-column table created beforehand.
 * @throws Error when the table does not hold one row per line.
 */
export async function postgresFloor(
  cluster: PostgresCluster,
  dump: Pick<DumpInput, 'path' | 'entity' | 'lines'>,
  compression: 'default' | 'lz4' = 'default',
): Promise<PostgresRun> {
  const { url, bare } = await freshDatabase(cluster, 'bench_floor');
  const column = compression === 'lz4' ? 'line text COMPRESSION lz4' : 'line text';
  await cluster.psql('bench_floor', `CREATE TABLE ${FLOOR_TABLE} (${column})`);
  const copy = `\\copy ${FLOOR_TABLE} (line) FROM pstdin WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')`;
  const script = 'xz -dc "$1" | tar -xO "$2" | "$3" -X -q -v ON_ERROR_STOP=1 -d "$4" -c "$5"';
  const run = await timed(
    'sh',
    ['-c', script, 'sh', dump.path, `mbdump/${dump.entity}`, postgresProgram('psql'), bare, copy],
    { env: { PGPASSWORD: POSTGRES_TEST_PASSWORD } },
  );
  const facts = await tableFacts(url, FLOOR_TABLE);
  if (facts.rows !== dump.lines) throw new Error(`floor stored ${facts.rows} rows, expected ${dump.lines}`);
  return { ms: run.ms, rows: facts.rows, tableBytes: facts.bytes };
}

/**
 * `livefeed import FILE --packet N --db postgres://...` as a process, into a fresh database whose
 * migrations were applied beforehand (as on any database but the first), the password from
 * LIVEFEED_DB_PASSWORD_FILE as an operator would give it.
 * @throws Error when the import fails or stores another number of changes than lines.
 */
export async function postgresLivefeed(
  cluster: PostgresCluster,
  dump: Pick<DumpInput, 'path' | 'packet' | 'entity' | 'lines'>,
  runner: 'dist' | 'tsx',
): Promise<PostgresRun> {
  const { url, bare } = await freshDatabase(cluster, 'bench_livefeed');
  const store = await openPostgresStore({ connectionString: url, display: 'bench_livefeed' });
  await store.close();
  const cli =
    runner === 'dist' ? [...LIVEFEED_CLI] : ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts')];
  const args = [
    'import',
    dump.path,
    '--packet',
    String(dump.packet),
    '--entity',
    dump.entity,
    '--log-level',
    'warn',
  ];
  const run = await timed(process.execPath, [...cli, ...args], {
    env: { ...LIVEFEED_ENV, ...livefeedDbEnv(cluster, bare) },
  });
  const facts = await tableFacts(url, 'changes');
  if (facts.rows !== dump.lines)
    throw new Error(`livefeed stored ${facts.rows} changes of ${dump.lines} lines`);
  const seconds = /in ([\d.]+) s$/m.exec(run.stdout)?.[1];
  return {
    ms: run.ms,
    rows: facts.rows,
    tableBytes: facts.bytes,
    importSeconds: seconds ? Number(seconds) : undefined,
  };
}

/**
 * The inputs: the main benchmark's big dump (lines of 1.5 KB on average, under PostgreSQL's 2 KB
 * TOAST threshold) and the real-shaped dumps of `--sync-process` (bench/syncFeeds.ts: 3 KB and
 * 6–7 KB recording lines, stored compressed out of line).
 */
async function postgresInputs(outDir: string, scale: number, log: (line: string) => void) {
  const { big } = await buildInputs(outDir, { scale, log });
  const feeds = await buildSyncFeeds(outDir, { scale, log });
  const shaped = (name: 'lines3k' | 'lines6k'): PostgresInput => {
    const feed = feeds[name];
    const [dump] = feed.dumps;
    return {
      name,
      dump: {
        path: dump!.path,
        packet: feed.from,
        entity: 'recording',
        lines: feed.lines,
        memberBytes: feed.memberBytes,
      },
    };
  };
  return [{ name: 'big (1.5 KB lines)', dump: big }, shaped('lines3k'), shaped('lines6k')];
}

/**
 * Runs, on each input, the floor (the server's default compression, as the issue states it), the
 * floor with an lz4 column and livefeed `runs` times each, interleaved, on one durable throw-away
 * cluster.
 * @throws Error when either stores a wrong number of rows, or PostgreSQL is missing.
 */
export async function postgresBench(options: {
  runs: number;
  scale: number;
  runner: 'dist' | 'tsx';
  log: (line: string) => void;
}): Promise<PostgresBenchResult[]> {
  const outDir = options.scale === 1 ? OUT : join(OUT, `postgres-scale-${options.scale}`);
  const inputs = await postgresInputs(outDir, options.scale, options.log);
  const cluster = await startPostgres({ durable: true });
  const runs = new Map<string, PostgresBenchResult['runs']>(inputs.map((i) => [i.name, []]));
  try {
    for (let r = 0; r < options.runs; r++) {
      for (const { name, dump } of inputs) {
        const floor = await postgresFloor(cluster, dump);
        const floorLz4 = await postgresFloor(cluster, dump, 'lz4');
        const livefeed = await postgresLivefeed(cluster, dump, options.runner);
        runs.get(name)!.push({ floor, floorLz4, livefeed });
        const s = (run: PostgresRun) => `${(run.ms / 1000).toFixed(2)} s`;
        options.log(
          `  run ${r + 1}, ${name}: floor ${s(floor)} (lz4 ${s(floorLz4)}), livefeed import ${s(livefeed)} ` +
            `(its own ${livefeed.importSeconds ?? '?'} s); tables ${(floor.tableBytes / 1e6).toFixed(1)} / ${(livefeed.tableBytes / 1e6).toFixed(1)} MB`,
        );
      }
    }
  } finally {
    await cluster.stop();
  }
  return inputs.map(({ name, dump }) => {
    const inputRuns = runs.get(name)!;
    const best = (pick: (run: PostgresBenchResult['runs'][number]) => PostgresRun) =>
      Math.min(...inputRuns.map((run) => pick(run).ms));
    const [floor, floorLz4, livefeed] = [
      best((r) => r.floor),
      best((r) => r.floorLz4),
      best((r) => r.livefeed),
    ];
    return {
      input: name,
      lines: dump.lines,
      memberBytes: dump.memberBytes,
      runs: inputRuns,
      bestFloorMs: floor,
      bestFloorLz4Ms: floorLz4,
      bestLivefeedMs: livefeed,
      ratio: Number((livefeed / floor).toFixed(3)),
      ratioLz4: Number((livefeed / floorLz4).toFixed(3)),
    };
  });
}

/** The `--postgres` section of `npm run bench` (bench/run.ts). */
export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: { runs: { type: 'string' }, scale: { type: 'string' }, runner: { type: 'string' } },
  });
  const runner = values.runner === 'tsx' ? 'tsx' : 'dist';
  if (runner === 'dist' && !existsSync(join(ROOT, 'dist', 'cli', 'main.js')))
    throw new Error('--runner dist needs the compiled livefeed: npm run build (or pass --runner tsx)');
  const scale = Number(values.scale ?? 1);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const results = await postgresBench({ runs: Number(values.runs ?? 3), scale, runner, log });
  for (const result of results)
    log(
      `PostgreSQL import, ${result.input}, ${result.lines} lines: floor ${(result.bestFloorMs / 1000).toFixed(2)} s ` +
        `(lz4 ${(result.bestFloorLz4Ms / 1000).toFixed(2)} s), livefeed ${(result.bestLivefeedMs / 1000).toFixed(2)} s: ` +
        `${result.ratio} × the floor (target ≤ 1.5 ×), ${result.ratioLz4} × the lz4 floor`,
    );
  writeFileSync(join(OUT, `postgres-${scale}.json`), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

/**
 * `npm run bench -- --bootstrap-postgres [--lines N] [--runs N]` (issues 14 and 17): a real
 * `livefeed bootstrap --db postgres://...` process (the compiled livefeed, as installed) of the
 * bootstrap benchmark's generated full dump (bench/bootstrapInput.ts, N real-shaped recording
 * lines, 1,000,000 by default, cached) from the sample feed over loopback, its signature verified,
 * into a new database of a durable throw-away cluster (test/support/postgres.ts): the first open's
 * migrations, the COPY ingest, the search index and the bootstrap's position, as an operator's first
 * command on PostgreSQL would run them. Against the floor of the PostgreSQL import benchmark
 * (bench/postgres.ts: `xz -dc | tar -xO | psql \copy` into a one-column table), runs interleaved,
 * the best of each counted. Also the database's size against the uncompressed lines and the
 * process's peak RSS (issue 14's figures on SQLite: ≤ 1.3 ×, ≤ 1.2 ×, ≤ 250 MB). Prints one JSON
 * line and writes bench/out/bootstrap-postgres-<lines>.json; the figures are copied into
 * bench/RESULTS.md and the README by hand.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type PostgresCluster, startPostgres } from '../test/support/postgres.js';
import { bootstrapProcess } from './bootstrap.js';
import { BENCH_OUT, type BootstrapInput, bootstrapInput } from './bootstrapInput.js';
import { LIVEFEED_CLI } from './cli.js';
import { freshDatabase, livefeedDbEnv, type PostgresRun, postgresFloor } from './postgres.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DATABASE = 'bench_bootstrap';

/** One run of `livefeed bootstrap` into PostgreSQL: wall ms of the process, its peak RSS, sizes. */
interface BootstrapRun {
  ms: number;
  peakRssMb: number | null;
  /** `pg_database_size` after the run (tables, indexes, TOAST, catalogs). */
  databaseBytes: number;
  changesBytes: number;
  searchIndexBytes: number;
}

/** Sizes of the bootstrapped database at `url`, once its `changes` hold one row per line. */
async function databaseFacts(url: string, lines: number) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<Record<string, string>>(
      `SELECT (SELECT count(*) FROM changes) AS rows, pg_database_size(current_database()) AS database,
         pg_total_relation_size('changes') AS changes, pg_total_relation_size('search_index') AS search`,
    );
    const facts = rows[0]!;
    if (Number(facts.rows) !== lines)
      throw new Error(`bootstrap stored ${facts.rows} changes of ${lines} lines`);
    return {
      databaseBytes: Number(facts.database),
      changesBytes: Number(facts.changes),
      searchIndexBytes: Number(facts.search),
    };
  } finally {
    await client.end();
  }
}

/**
 * `livefeed bootstrap` of `input` into a new database on `cluster`, the password from
 * LIVEFEED_DB_PASSWORD_FILE as an operator would give it.
 * @throws Error when the process fails or stores another number of changes than lines.
 */
async function bootstrapRun(cluster: PostgresCluster, input: BootstrapInput): Promise<BootstrapRun> {
  const { url, bare } = await freshDatabase(cluster, DATABASE);
  const dataDir = join(BENCH_OUT, 'bootstrap-postgres-data');
  rmSync(dataDir, { recursive: true, force: true });
  try {
    const run = await bootstrapProcess(input, dataDir, {
      entry: LIVEFEED_CLI,
      logLevel: 'warn',
      env: livefeedDbEnv(cluster, bare),
    });
    return { ms: run.ms, peakRssMb: run.treeRssMb ?? null, ...(await databaseFacts(url, input.lines)) };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The section's entry point (bench/run.ts). */
export async function main(argv: string[]): Promise<Record<string, unknown>> {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: { lines: { type: 'string' }, runs: { type: 'string' } },
  });
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js')))
    throw new Error('--bootstrap-postgres times the compiled livefeed: npm run build first');
  const lines = Number(values.lines ?? 1_000_000);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const input = await bootstrapInput(lines, log);
  const cluster = await startPostgres({ durable: true });
  const runs: { floor: PostgresRun; livefeed: BootstrapRun }[] = [];
  try {
    for (let r = 0; r < Number(values.runs ?? 1); r++) {
      const floor = await postgresFloor(cluster, { path: input.archive, entity: 'recording', lines });
      const livefeed = await bootstrapRun(cluster, input);
      runs.push({ floor, livefeed });
      log(
        `  run ${r + 1}: floor ${(floor.ms / 1000).toFixed(2)} s, livefeed bootstrap ${(livefeed.ms / 1000).toFixed(2)} s, ` +
          `peak RSS ${livefeed.peakRssMb ?? '?'} MB, database ${(livefeed.databaseBytes / 1e6).toFixed(0)} MB`,
      );
    }
  } finally {
    await cluster.stop();
  }
  const bestFloorMs = Math.min(...runs.map((run) => run.floor.ms));
  const best = runs.reduce((a, b) => (b.livefeed.ms < a.livefeed.ms ? b : a)).livefeed;
  const figures = {
    date: new Date().toISOString(),
    lines,
    uncompressedBytes: input.uncompressedBytes,
    bootstrapMs: Math.round(best.ms),
    floorMs: Math.round(bestFloorMs),
    timeVsFloor: Number((best.ms / bestFloorMs).toFixed(2)),
    peakRssMb: Math.max(...runs.map((run) => run.livefeed.peakRssMb ?? 0)) || null,
    databaseVsLines: Number((best.databaseBytes / input.uncompressedBytes).toFixed(3)),
    databaseBytes: best.databaseBytes,
    changesBytes: best.changesBytes,
    searchIndexBytes: best.searchIndexBytes,
    runs,
  };
  log(
    `PostgreSQL bootstrap of ${lines} lines: ${(best.ms / 1000).toFixed(2)} s against the floor's ` +
      `${(bestFloorMs / 1000).toFixed(2)} s (${figures.timeVsFloor} ×); database ${figures.databaseVsLines} × the lines`,
  );
  writeFileSync(join(BENCH_OUT, `bootstrap-postgres-${lines}.json`), `${JSON.stringify(figures, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  return figures;
}

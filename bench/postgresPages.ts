/**
 * `npm run bench -- --postgres-pages [--seconds S] [--rounds R]` (issue 17): the page of the GraphQL
 * section, `changes(packet, entity: RECORDING, first: 50) { nodes { mbid data } }` over 50 recording
 * lines of 3–7 KB (bench/pageLines.ts), served by one and by two `livefeed serve` processes over one
 * PostgreSQL database, against one `livefeed serve` over a SQLite file holding the same JSON dump.
 * Everything is the real command (bin/livefeed.js on dist/): `livefeed import` fills both stores,
 * `livefeed serve --port 0` serves them; the load generator is bench/load.ts' (10 connections a
 * server), in interleaved rounds, the best round of each case counting. With two servers both are
 * loaded at once and their throughputs add up. PostgreSQL runs on the same 2 cores (a throw-away
 * durable cluster, test/support/postgres.ts), so two servers show what one shared database gives on
 * one machine, not the gain of a second machine. Prints one JSON line and writes
 * bench/out/postgres-pages.json.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type PostgresCluster, startPostgres } from '../test/support/postgres.js';
import { LIVEFEED_CLI, LIVEFEED_ENV } from './cli.js';
import { type LoadResult, load } from './load.js';
import { PAGE_PACKET, writePageDump } from './pageLines.js';
import { livefeedDbEnv } from './postgres.js';
import { timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGE = `{ changes(packet: ${PAGE_PACKET}, entity: RECORDING, first: 50) { nodes { mbid data } } }`;

/** A `livefeed` command's environment: the database and the PostgreSQL password file. */
type Target = Record<string, string>;

/** `livefeed import` of the page's dump into the database of `target`. */
async function importPage(archivePath: string, target: Target): Promise<void> {
  const args = ['import', archivePath, '--packet', String(PAGE_PACKET), '--entity', 'recording'];
  await timed(process.execPath, [...LIVEFEED_CLI, ...args, '--log-level', 'warn'], {
    env: { ...LIVEFEED_ENV, ...target },
  });
}

/** `livefeed serve --port 0` on `target`, resolved with its port once it logs `listening`. */
async function serve(target: Target, dataDir: string): Promise<{ port: number; child: ChildProcess }> {
  const args = ['serve', '--port', '0', '--data-dir', dataDir, '--log-format', 'json', '--log-level', 'info'];
  const child = spawn(process.execPath, [...LIVEFEED_CLI, ...args], {
    env: { ...process.env, ...LIVEFEED_ENV, ...target },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (chunk) => {
      text += chunk;
      for (const line of text.split('\n')) {
        if (!line.includes('"listening"')) continue;
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => reject(new Error(`livefeed serve exited (${code}): ${text.slice(-500)}`)));
  });
  return { port, child };
}

/** Loads every server of a case at once; the case's throughput is their sum. */
async function loadCase(name: string, ports: number[], seconds: number) {
  const results = await Promise.all(ports.map((port, i) => load(port, `${name} #${i + 1}`, PAGE, seconds)));
  return {
    name,
    requestsPerSecond: results.reduce((sum, result) => sum + result.requestsPerSecond, 0),
    p50Ms: Math.max(...results.map((result) => result.p50Ms)),
    p99Ms: Math.max(...results.map((result) => result.p99Ms)),
    servers: results as LoadResult[],
  };
}

type CaseResult = Awaited<ReturnType<typeof loadCase>>;

/** The benchmark; resolves to the best round of each case and the ratios to the SQLite server. */
export async function postgresPagesBench(options: {
  seconds: number;
  rounds: number;
  log: (line: string) => void;
}) {
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'lf-pg-pages-'));
  let cluster: PostgresCluster | undefined;
  const servers: ChildProcess[] = [];
  try {
    const { archivePath, lineBytes } = await writePageDump(dir);
    options.log(`page dump: 500 recording lines of ${lineBytes} bytes on average`);
    cluster = await startPostgres({ durable: true });
    const { withoutPassword } = await cluster.createDatabase('bench_pages');
    const postgres = livefeedDbEnv(cluster, withoutPassword);
    const sqlite = { LIVEFEED_DB: join(dir, 'livefeed.db') };
    for (const target of [sqlite, postgres]) await importPage(archivePath, target);
    const start = async (target: Target) => {
      const server = await serve(target, dir);
      servers.push(server.child);
      return server.port;
    };
    const sqlitePort = await start(sqlite);
    const postgresPorts = [await start(postgres), await start(postgres)];
    const cases: [string, number[]][] = [
      ['one SQLite server', [sqlitePort]],
      ['one PostgreSQL server', postgresPorts.slice(0, 1)],
      ['two PostgreSQL servers', postgresPorts],
    ];
    const best = new Map<string, CaseResult>();
    for (let round = 1; round <= options.rounds; round++) {
      for (const [name, ports] of cases) {
        const result = await loadCase(name, ports, options.seconds);
        options.log(`  round ${round}: ${name} ${result.requestsPerSecond} req/s, p99 ${result.p99Ms} ms`);
        if ((best.get(name)?.requestsPerSecond ?? -1) < result.requestsPerSecond) best.set(name, result);
      }
    }
    const sqliteRate = best.get('one SQLite server')!.requestsPerSecond;
    return {
      date: new Date().toISOString(),
      lineBytes,
      cases: cases.map(([name]) => ({
        ...best.get(name)!,
        vsSqlite: Number((best.get(name)!.requestsPerSecond / sqliteRate).toFixed(2)),
      })),
    };
  } finally {
    for (const child of servers) child.kill('SIGTERM');
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The `--postgres-pages` section of `npm run bench` (bench/run.ts). */
export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: { seconds: { type: 'string' }, rounds: { type: 'string' } },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const result = await postgresPagesBench({
    seconds: Number(values.seconds ?? 5),
    rounds: Number(values.rounds ?? 3),
    log,
  });
  writeFileSync(join(ROOT, 'bench', 'out', 'postgres-pages.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

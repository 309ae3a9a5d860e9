/**
 * `npm run bench` (issue 7): measures livefeed's JSON dump ingest, replication packet store and
 * GraphQL serving on inputs it builds itself (bench/inputs.ts), against yardsticks run on the same
 * files in the same run, and checks the targets. Writes bench/out/report.json and bench/RESULTS.md
 * and prints the table. Options: `--runs N` (timed runs of each ingest, interleaved; the best
 * counts, default 3), `--rebuild` (fresh inputs), `--graphql-seconds S` (per query, default 5),
 * `--skip-graphql`. Needs xz, tar, sqlite3, python3 and bzip2 on PATH; loopback only.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { entitySlot } from '../src/db/keys.js';
import type { EntityType } from '../src/feed/entities.js';
import { type BenchInputs, buildInputs, type DumpInput } from './inputs.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'bench', 'out');
const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const RUNS = option('--runs', 3);
const GRAPHQL_SECONDS = option('--graphql-seconds', 5);
const log = (text: string) => process.stderr.write(`${text}\n`);

// ------------------------------------------------------------------------------------------------
// Processes

interface Timed {
  ms: number;
  stdout: string;
  /** Largest RSS of the process and its children in MB (GNU time), when /usr/bin/time exists. */
  treeRssMb?: number;
}

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** Runs a command to its end; wall time from spawn to exit. */
function timed(cmd: string, args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<Timed> {
  const [program, programArgs] = GNU_TIME ? [GNU_TIME, ['-f', 'maxrss=%M', cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(program, programArgs, { cwd: ROOT, env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = performance.now() - started;
      const rss = /maxrss=(\d+)/.exec(stderr);
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} failed (${code}): ${stderr.trim().slice(-2000)}`));
      else resolve({ ms, stdout, treeRssMb: rss ? Math.round(Number(rss[1]) / 1024) : undefined });
    });
  });
}

/** A TypeScript bench script in its own Node process (tsx loader). */
function node(script: string, args: string[]): Promise<Timed> {
  return timed(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', script), ...args]);
}

function lastJson<T>(out: Timed): T {
  const line = out.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as T;
}

function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(path + suffix, { force: true });
}

// ------------------------------------------------------------------------------------------------
// JSON dump ingest

interface IngestRun {
  ms: number;
  lines: number;
  bytes: number;
  changes: number;
  quarantined: number;
  maxRssMb: number;
  cpuMs: number;
  decoder: string;
  treeRssMb?: number;
}

async function floor(dump: DumpInput, db: string): Promise<number> {
  removeDb(db);
  // Raw lines into a one-column table: ASCII mode with a unit separator that JSON text never holds
  // raw, and `\n` as the row separator, so every line is one row, byte for byte, nothing parsed.
  const script = 'xz -dc "$1" | tar -xO "$2" | sqlite3 "$3" "CREATE TABLE t(line TEXT)" ".mode ascii" "$4" ".import /dev/stdin t"';
  const run = await timed('sh', ['-c', script, 'sh', dump.path, `mbdump/${dump.entity}`, db, '.separator "\x1f" "\\n"']);
  const rows = (new Database(db, { readonly: true }).prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
  if (rows !== dump.lines) throw new Error(`floor stored ${rows} rows, expected ${dump.lines}`);
  return run.ms;
}

async function plainScript(dump: DumpInput, db: string): Promise<number> {
  removeDb(db);
  const run = await timed('python3', [
    join(ROOT, 'bench', 'plain.py'),
    dump.path,
    db,
    String(dump.packet),
    dump.entity,
    String(entitySlot(dump.entity as EntityType)),
  ]);
  if (Number(run.stdout.trim()) !== dump.lines) throw new Error(`plain script stored ${run.stdout.trim()} rows`);
  return run.ms;
}

async function ours(dump: DumpInput, db: string, decoder = 'auto'): Promise<IngestRun> {
  const run = await node('ingestChild.ts', [dump.path, db, String(dump.packet), dump.entity, decoder]);
  const result = { ...lastJson<IngestRun>(run), treeRssMb: run.treeRssMb };
  if (result.changes !== dump.lines) throw new Error(`livefeed stored ${result.changes} changes of ${dump.lines} lines`);
  return result;
}

// ------------------------------------------------------------------------------------------------
// GraphQL

interface LoadResult {
  query: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  responseBytes: number;
}

async function startServer(db: string): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'serverChild.ts'), db], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (c) => {
      text += c;
      const line = text.split('\n')[0];
      if (text.includes('\n') && line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return { port, child };
}

async function load(port: number, name: string, query: string, seconds: number): Promise<LoadResult> {
  const url = `http://127.0.0.1:${port}/graphql`;
  const body = JSON.stringify({ query });
  // One request first: the answer must be right before its speed means anything.
  const check = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await check.text();
  const parsed = JSON.parse(text) as { errors?: unknown };
  if (!check.ok || parsed.errors) throw new Error(`${name}: ${check.status} ${text.slice(0, 500)}`);
  const bin = join(ROOT, 'node_modules', '.bin', 'autocannon');
  const common = ['-m', 'POST', '-H', 'content-type=application/json', '-b', body, '-c', '10', '--json'];
  await timed(bin, [...common, '-d', '1', url]); // warm-up, not counted
  const out = await timed(bin, [...common, '-d', String(seconds), url]);
  const r = JSON.parse(out.stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    errors: number;
    non2xx: number;
  };
  return {
    query: name,
    requestsPerSecond: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    errors: r.errors,
    non2xx: r.non2xx,
    responseBytes: Buffer.byteLength(text),
  };
}

/** Loads the GraphQL server on `dbPath` (the big dump ingested) with the three queries. */
async function graphqlLoad(big: DumpInput, dbPath: string): Promise<LoadResult[]> {
  const sample = new Database(dbPath, { readonly: true })
    .prepare('SELECT mbid FROM changes ORDER BY id LIMIT 1 OFFSET 1000')
    .get() as { mbid: string };
  const server = await startServer(dbPath);
  try {
    const page = `{ changes(packet: ${big.packet}, entity: RECORDING, first: 50) { nodes { mbid data } } }`;
    const entity = `{ entity(mbid: "${sample.mbid}") { mbid latest { data } } }`;
    return [
      await load(server.port, 'changes(first: 50) { nodes { mbid data } }', page, GRAPHQL_SECONDS),
      await load(server.port, 'entity(mbid) { latest { data } }', entity, GRAPHQL_SECONDS),
      await load(server.port, '{ __typename }', '{ __typename }', GRAPHQL_SECONDS),
    ];
  } finally {
    server.child.kill('SIGTERM');
  }
}

// ------------------------------------------------------------------------------------------------
// Report

const mb = (bytes: number) => bytes / 1e6;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const ratio = (a: number, b: number) => (a / b).toFixed(2);
const best = (values: number[]) => Math.min(...values);

function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `${cpus().length} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

function tool(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    return 'missing';
  }
}

async function main(): Promise<void> {
  for (const [cmd, args] of [
    ['xz', ['--version']],
    ['tar', ['--version']],
    ['sqlite3', ['--version']],
    ['python3', ['--version']],
    ['bzip2', ['--help']],
  ] as const) {
    if (tool(cmd, [...args]) === 'missing' && cmd !== 'bzip2') throw new Error(`npm run bench needs ${cmd} on PATH`);
  }
  const inputs: BenchInputs = await buildInputs(OUT, { rebuild: flag('--rebuild'), log });
  const { big, small, longLines, packet } = inputs;
  const db = (name: string) => join(OUT, `${name}.db`);
  if (flag('--graphql-only')) {
    for (const g of await graphqlLoad(big, db('ours'))) log(`  ${g.query}: ${g.requestsPerSecond} req/s, p50 ${g.p50Ms} ms, p99 ${g.p99Ms} ms`);
    return;
  }

  log(`JSON dump: ${mb(big.memberBytes).toFixed(0)} MB, ${big.lines} lines; ${RUNS} interleaved runs each`);
  const floorMs: number[] = [];
  const plainMs: number[] = [];
  const oursRuns: IngestRun[] = [];
  for (let r = 0; r < RUNS; r++) {
    floorMs.push(await floor(big, db('floor')));
    oursRuns.push(await ours(big, db('ours')));
    plainMs.push(await plainScript(big, db('plain')));
    log(`  run ${r + 1}: floor ${s(floorMs.at(-1)!)}, livefeed ${s(oursRuns.at(-1)!.ms)}, plain script ${s(plainMs.at(-1)!)}`);
  }
  const lzmaNative = await ours(big, db('ours-lzma-native'), 'lzma-native');
  log(`  livefeed with lzma-native: ${s(lzmaNative.ms)}`);
  removeDb(db('ours-lzma-native'));
  const smallRun = await ours(small, db('small'));
  const longRun = await ours(longLines, db('long'));
  removeDb(db('small'));
  removeDb(db('long'));
  log(`  RSS: big ${oursRuns.at(-1)!.maxRssMb} MB, small ${smallRun.maxRssMb} MB, long lines ${longRun.maxRssMb} MB`);

  const decode = async (decoder: string, file: string) => {
    try {
      return lastJson<{ ms: number; cpuMs: number; maxRssMb: number }>(await node('decodeChild.ts', [decoder, file]));
    } catch (error) {
      if (decoder === 'node-liblzma') return undefined; // optional comparison, not installed
      throw error;
    }
  };
  const xzAlone = best([(await timed('sh', ['-c', 'xz -dc "$1" > /dev/null', 'sh', big.path])).ms]);
  const decoders = {
    'xz -dc (C, alone)': { ms: xzAlone },
    'lzma-native (liblzma 5.2 in-process)': await decode('lzma-native', big.path),
    'xz child process (livefeed default)': await decode('xz-process', big.path),
    'node-liblzma (not a dependency)': await decode('node-liblzma', big.path),
  };
  log(`  decoders: ${Object.entries(decoders).map(([k, v]) => `${k} ${v ? s(v.ms) : 'n/a'}`).join(', ')}`);

  log(`replication packet: ${packet.rows} rows, ${mb(packet.tarBytes).toFixed(0)} MB tar`);
  const bzip2Alone = (await timed('sh', ['-c', 'bzip2 -dc "$1" > /dev/null', 'sh', packet.path])).ms;
  const unbzip2 = await decode('unbzip2-stream', packet.path);
  const bzip2Process = await decode('bzip2-process', packet.path);
  removeDb(db('packet'));
  const packetRun = lastJson<{ ms: number; rows: number; cpuMs: number; maxRssMb: number }>(
    await node('packetChild.ts', [packet.path, db('packet'), String(packet.packet)]),
  );
  removeDb(db('packet'));
  log(`  bzip2 -dc ${s(bzip2Alone)}, unbzip2-stream ${s(unbzip2!.ms)}, store ${s(packetRun.ms)}`);

  let graphql: LoadResult[] = [];
  if (!flag('--skip-graphql')) {
    if (!existsSync(db('ours'))) await ours(big, db('ours'));
    graphql = await graphqlLoad(big, db('ours'));
    for (const g of graphql) log(`  ${g.query}: ${g.requestsPerSecond} req/s, p50 ${g.p50Ms} ms, p99 ${g.p99Ms} ms`);
  }

  // ---- figures and targets
  const floorBest = best(floorMs);
  const plainBest = best(plainMs);
  const oursBest = best(oursRuns.map((r) => r.ms));
  const peakRss = Math.max(...oursRuns.map((r) => r.maxRssMb), smallRun.maxRssMb, longRun.maxRssMb);
  const typename = graphql.find((g) => g.query === '{ __typename }');
  const pageLoad = graphql[0];
  const pageRatio = typename && pageLoad ? pageLoad.requestsPerSecond / typename.requestsPerSecond : undefined;
  const targets = [
    { target: 'JSON dump ingest ≤ 1.3 × floor', value: oursBest / floorBest, limit: 1.3, pass: oursBest / floorBest <= 1.3 },
    { target: 'JSON dump ingest ≤ 0.7 × plain script', value: oursBest / plainBest, limit: 0.7, pass: oursBest / plainBest <= 0.7 },
    { target: 'peak RSS < 300 MB (any dump size, any line length)', value: peakRss, limit: 300, pass: peakRss < 300 },
    ...(pageRatio === undefined
      ? []
      : [{ target: '50-item page ≥ 0.5 × { __typename } throughput', value: pageRatio, limit: 0.5, pass: pageRatio >= 0.5 }]),
  ];

  const lines: string[] = [];
  const add = (text = '') => lines.push(text);
  add(`Machine: ${machine()}. ${new Date().toISOString().slice(0, 10)}; best of ${RUNS} interleaved runs.`);
  add(`Tools: ${tool('xz', ['--version'])}; sqlite3 ${tool('sqlite3', ['--version']).split(' ')[0]}; ${tool('python3', ['--version'])}.`);
  add();
  add(
    `**JSON dump** (\`mbdump/recording\`): ${mb(big.memberBytes).toFixed(1)} MB, ${big.lines.toLocaleString('en')} lines ` +
      `(longest ${(big.longestLine / 1024).toFixed(1)} KiB), ${mb(big.bytes).toFixed(1)} MB xz -6 ` +
      `(${(big.memberBytes / big.bytes).toFixed(1)}:1; every UUID fresh).`,
  );
  add();
  add('| JSON dump ingest | time | MB/s | lines/s | × floor | × plain script |');
  add('|---|---:|---:|---:|---:|---:|');
  const row = (name: string, ms: number) =>
    add(
      `| ${name} | ${s(ms)} | ${(mb(big.memberBytes) / (ms / 1000)).toFixed(0)} | ` +
        `${Math.round(big.lines / (ms / 1000)).toLocaleString('en')} | ${ratio(ms, floorBest)} | ${ratio(ms, plainBest)} |`,
    );
  row('floor: `xz -dc \\| tar -xO \\| sqlite3 .import` (raw lines, 1 column)', floorBest);
  row('plain Python script (`lzma`+`json`+`sqlite3`, same key and index)', plainBest);
  row('**livefeed** `ingestJsonDump` (xz child process, default)', oursBest);
  row('livefeed with the lzma-native decoder (fallback without xz)', lzmaNative.ms);
  add();
  add('| decompress only (same file) | time |');
  add('|---|---:|');
  for (const [name, v] of Object.entries(decoders)) add(`| ${name} | ${v ? s(v.ms) : 'not installed'} |`);
  add();
  add('| peak RSS of the ingest process | dump | longest line | RSS |');
  add('|---|---:|---:|---:|');
  add(`| big dump | ${mb(big.memberBytes).toFixed(0)} MB | ${(big.longestLine / 1024).toFixed(0)} KiB | ${oursRuns.at(-1)!.maxRssMb} MB |`);
  add(`| small dump (a tenth) | ${mb(small.memberBytes).toFixed(0)} MB | ${(small.longestLine / 1024).toFixed(0)} KiB | ${smallRun.maxRssMb} MB |`);
  add(
    `| long lines | ${mb(longLines.memberBytes).toFixed(0)} MB | ${(longLines.longestLine / 2 ** 20).toFixed(1)} MiB | ${longRun.maxRssMb} MB |`,
  );
  add(`| (process tree incl. the xz child, GNU time, big dump) | | | ${oursRuns.at(-1)!.treeRssMb ?? 'n/a'} MB |`);
  add();
  add(
    `**Replication packet** (v2): ${packet.rows.toLocaleString('en')} rows, ${mb(packet.tarBytes).toFixed(1)} MB tar, ` +
      `${mb(packet.bytes).toFixed(1)} MB bzip2 -9.`,
  );
  add();
  add('| replication packet | time | × bzip2 -dc |');
  add('|---|---:|---:|');
  add(`| \`bzip2 -dc\` alone | ${s(bzip2Alone)} | 1.00 |`);
  add(`| unbzip2-stream (livefeed's bzip2 library) decompress alone | ${s(unbzip2!.ms)} | ${ratio(unbzip2!.ms, bzip2Alone)} |`);
  add(`| bzip2 child process read from Node, alone (alternative) | ${s(bzip2Process!.ms)} | ${ratio(bzip2Process!.ms, bzip2Alone)} |`);
  add(`| livefeed \`storeReplicationPacket\` (full store) | ${s(packetRun.ms)} | ${ratio(packetRun.ms, bzip2Alone)} |`);
  add();
  if (graphql.length > 0) {
    add(`**GraphQL** (\`livefeed serve\` app, 1 process; autocannon in another, 10 connections, ${GRAPHQL_SECONDS} s each, loopback):`);
    add();
    add('| query | req/s | p50 | p99 | response | × `__typename` |');
    add('|---|---:|---:|---:|---:|---:|');
    for (const g of graphql) {
      add(
        `| \`${g.query}\` | ${g.requestsPerSecond.toLocaleString('en')} | ${g.p50Ms} ms | ${g.p99Ms} ms | ` +
          `${(g.responseBytes / 1024).toFixed(1)} KiB | ${typename ? ratio(g.requestsPerSecond, typename.requestsPerSecond) : ''} |`,
      );
    }
    add();
  }
  add('| target | measured | |');
  add('|---|---:|---|');
  for (const t of targets) add(`| ${t.target} | ${t.value.toFixed(2)} | ${t.pass ? 'met' : '**NOT MET**'} |`);

  const table = lines.join('\n');
  process.stdout.write(`${table}\n`);
  const report = {
    date: new Date().toISOString(),
    machine: machine(),
    runs: RUNS,
    inputs,
    jsonDump: {
      floorMs,
      plainScriptMs: plainMs,
      livefeed: oursRuns,
      livefeedLzmaNative: lzmaNative,
      best: { floorMs: floorBest, plainScriptMs: plainBest, livefeedMs: oursBest },
      rss: { big: oursRuns.at(-1)!.maxRssMb, small: smallRun.maxRssMb, longLines: longRun.maxRssMb },
      decoders,
    },
    packet: { bzip2AloneMs: bzip2Alone, unbzip2Stream: unbzip2, bzip2Process, store: packetRun },
    graphql,
    targets,
  };
  writeFileSync(join(OUT, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(
    join(ROOT, 'bench', 'RESULTS.md'),
    `# Benchmark results\n\nThe latest \`npm run bench\` (bench/run.ts; the JSON report is bench/out/report.json).\n\n${table}\n`,
  );
  if (targets.some((t) => !t.pass)) process.exitCode = 1;
}

await main();

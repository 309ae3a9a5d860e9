/**
 * GraphQL under load over loopback, shared by bench/run.ts and bench/bootstrap.ts: the server in
 * its own process (bench/serverChild.ts) and the load generator (wrk when installed, else
 * autocannon) in another.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LIVEFEED_ENV, NODE_FLAGS } from './cli.js';
import { timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What one load of one query measured. */
export interface LoadResult {
  query: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  /** Requests without an answer within the load generator's timeout (2 s for wrk, 10 s for autocannon). */
  timeouts: number;
  non2xx: number;
  /** Bytes of an answer (the mean over a mix's bodies). */
  responseBytes: number;
  /**
   * The server process's CPU (every thread, user and system) per answered request during the timed
   * load, in µs; absent when the server's pid is not given or /proc is not there. Unlike req/s it
   * does not depend on how much of the shared cores the load generator takes.
   */
  serverCpuUs?: number;
}

/** One result on one line: throughput, latencies and, when measured, the server's CPU per request. */
export function describeLoad(result: LoadResult): string {
  const cpu = result.serverCpuUs === undefined ? '' : `, server CPU ${result.serverCpuUs} µs a request`;
  const timeouts = result.timeouts ? `, ${result.timeouts} timeouts` : '';
  return `${result.query}: ${result.requestsPerSecond} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms${cpu}${timeouts}`;
}

/** CPU time of process `pid` so far (all threads, user + system), in ms; undefined without /proc. */
function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis start at field 3; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Clock ticks a second, the unit of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux). */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/**
 * Runs `timedLoad` and adds the server's CPU per request over it ({@link LoadResult.serverCpuUs}).
 */
async function withServerCpu(
  serverPid: number | undefined,
  timedLoad: () => Promise<Figures>,
): Promise<Figures> {
  const before = processCpuMs(serverPid);
  const figures = await timedLoad();
  const after = processCpuMs(serverPid);
  if (before === undefined || after === undefined || figures.requests === 0) return figures;
  return { ...figures, serverCpuUs: Math.round(((after - before) * 1000) / figures.requests) };
}

/** A server process of the bench, listening on 127.0.0.1 at `port`. */
export interface BenchServer {
  port: number;
  child: ChildProcess;
}

/** `bench/serverChild.ts` on `db`, resolved once it listens. */
export function startServer(db: string): Promise<BenchServer> {
  return startChild('serverChild.ts', db);
}

/**
 * `bench/fixedAnswerChild.ts` on `file`: a plain node:http server that answers every request with
 * the file's bytes, the ceiling of a load of that answer. Resolved once it listens.
 */
export function startFixedAnswerServer(file: string): Promise<BenchServer> {
  return startChild('fixedAnswerChild.ts', file);
}

/** A child of bench/ that prints `{"port": N}` once listening, run as bin/livefeed.js runs the server. */
async function startChild(script: string, arg: string): Promise<BenchServer> {
  const child = spawn(
    process.execPath,
    [...NODE_FLAGS, '--import', 'tsx', join(ROOT, 'bench', script), arg],
    {
      cwd: ROOT,
      // As bin/livefeed.js runs the server: its node flags and variables, NODE_ENV production.
      env: { ...process.env, ...LIVEFEED_ENV, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (c) => {
      text += c;
      const line = text.split('\n')[0];
      if (text.includes('\n') && line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
  return { port, child };
}

/**
 * `seconds` of load (10 connections) after a 1 s warm-up, once every answer checked. `query` is one
 * GraphQL query, or a mix: a list of request bodies (`{ query, variables }` as JSON text) sent in
 * turn, so that the figures are those of the mix as a whole. With `serverPid` (the server's process,
 * from {@link startServer}), the figures include its CPU per request.
 * @throws Error when an answer is not 200 without errors.
 */
export async function load(
  port: number,
  name: string,
  query: string | readonly string[],
  seconds: number,
  serverPid?: number,
): Promise<LoadResult> {
  const url = `http://127.0.0.1:${port}/graphql`;
  const bodies = typeof query === 'string' ? [JSON.stringify({ query })] : [...query];
  // One request of each body first: the answers must be right before their speed means anything.
  let responseBytes = 0;
  for (const body of bodies) {
    const check = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await check.text();
    const parsed = JSON.parse(text) as { errors?: unknown };
    if (!check.ok || parsed.errors) throw new Error(`${name}: ${check.status} ${text.slice(0, 500)}`);
    responseBytes += Buffer.byteLength(text);
  }
  responseBytes = Math.round(responseBytes / bodies.length);
  const figures =
    LOAD_GENERATOR === 'wrk'
      ? await wrkLoad(url, bodies, seconds, serverPid)
      : await autocannonLoad(url, bodies, seconds, serverPid);
  return { query: name, ...figures, responseBytes };
}

type Figures = Omit<LoadResult, 'query' | 'responseBytes'>;

/** wrk (C, Debian's package) costs the shared 2 cores far less per response byte than autocannon. */
async function wrkLoad(url: string, bodies: string[], seconds: number, serverPid?: number): Promise<Figures> {
  mkdirSync(join(ROOT, 'bench', 'out'), { recursive: true });
  // One body a line (JSON text has no raw newline), sent in turn by the one wrk thread.
  writeFileSync(WRK_BODIES, `${bodies.join('\n')}\n`);
  writeFileSync(
    WRK_SCRIPT,
    [
      'local bodies = {}',
      `for line in io.lines("${WRK_BODIES}") do bodies[#bodies + 1] = line end`,
      'local next = 0',
      'request = function()',
      '  next = next % #bodies + 1',
      '  return wrk.format("POST", nil, { ["content-type"] = "application/json" }, bodies[next])',
      'end',
      '',
    ].join('\n'),
  );
  const args = ['-t1', '-c10', '--latency', '-s', WRK_SCRIPT, url];
  await timed('wrk', ['-d1s', ...args]); // warm-up, not counted
  return withServerCpu(serverPid, async () =>
    wrkFigures((await timed('wrk', [`-d${seconds}s`, ...args])).stdout),
  );
}

/** The figures of wrk's report `out`. */
function wrkFigures(out: string): Figures {
  const ms = (label: string) => {
    const m = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
    if (!m) throw new Error(`wrk output without ${label}: ${out}`);
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  return {
    requestsPerSecond: Math.round(num(/Requests\/sec:\s+([\d.]+)/)),
    p50Ms: Math.round(ms('50%') * 100) / 100,
    p99Ms: Math.round(ms('99%') * 100) / 100,
    requests: num(/(\d+) requests in/),
    errors: num(/Socket errors: connect (\d+)/),
    timeouts: num(/Socket errors: .*timeout (\d+)/),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
  };
}

/** autocannon (a devDependency) in its own process, the bodies in turn on each connection. */
async function autocannonLoad(
  url: string,
  bodies: string[],
  seconds: number,
  serverPid?: number,
): Promise<Figures> {
  const run = async (duration: number) => {
    const script = `require('autocannon')({ url: process.env.URL, connections: 10, duration: ${duration},
      requests: JSON.parse(process.env.BODIES).map((body) => ({ method: 'POST', body,
        headers: { 'content-type': 'application/json' } })) }, (error, result) => {
      if (error) throw error;
      process.stdout.write(JSON.stringify(result));
    });`;
    const out = await timed(process.execPath, ['-e', script], {
      env: { URL: url, BODIES: JSON.stringify(bodies) },
    });
    return JSON.parse(out.stdout) as {
      requests: { average: number; total: number };
      latency: { p50: number; p99: number };
      errors: number;
      timeouts: number;
      non2xx: number;
    };
  };
  await run(1); // warm-up, not counted
  return withServerCpu(serverPid, async () => {
    const r = await run(seconds);
    return {
      requestsPerSecond: Math.round(r.requests.average),
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      requests: r.requests.total,
      errors: r.errors,
      timeouts: r.timeouts,
      non2xx: r.non2xx,
    };
  });
}

/** wrk when installed (`apt-get install wrk`), else autocannon (a devDependency). */
export const LOAD_GENERATOR: 'wrk' | 'autocannon' =
  process.argv.includes('--autocannon') || spawnSync('wrk', ['--version']).error ? 'autocannon' : 'wrk';
/** The wrk script that POSTs the bodies of {@link WRK_BODIES} in turn, written before each load. */
const WRK_SCRIPT = join(ROOT, 'bench', 'out', 'post.lua');
const WRK_BODIES = join(ROOT, 'bench', 'out', 'post-bodies.txt');

/**
 * The GraphQL load of the benchmarks (bench/run.ts, bench/search.ts): the server in its own process
 * (bench/serverChild.ts) and wrk (or autocannon) in another, 10 connections.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'bench', 'out');

/** One load run of one query: throughput, latency percentiles, failures. */
export interface LoadResult {
  query: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  responseBytes: number;
}

/** Starts bench/serverChild.ts on `db` (read-only) and resolves with its port once it listens. */
export async function startServer(db: string): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'serverChild.ts'), db], {
    cwd: ROOT,
    // As bin/livefeed.js and the single binary run the server.
    env: { ...process.env, NODE_ENV: 'production' },
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

/**
 * Loads `query` on the server at `port` from another process with 10 connections for `seconds`
 * (after a 1 s warm-up), once checking that it answers without errors.
 * @throws Error when the check request fails or answers GraphQL errors.
 */
export async function load(port: number, name: string, query: string, seconds: number): Promise<LoadResult> {
  const url = `http://127.0.0.1:${port}/graphql`;
  const body = JSON.stringify({ query });
  // One request first: the answer must be right before its speed means anything.
  const check = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await check.text();
  const parsed = JSON.parse(text) as { errors?: unknown };
  if (!check.ok || parsed.errors) throw new Error(`${name}: ${check.status} ${text.slice(0, 500)}`);
  const responseBytes = Buffer.byteLength(text);
  if (LOAD_GENERATOR === 'wrk') {
    // wrk (C, Debian's package) costs the shared 2 cores far less per response byte than autocannon.
    const args = ['-t1', '-c10', '--latency', '-s', WRK_SCRIPT, url];
    const env = { BODY: body };
    await timed('wrk', ['-d1s', ...args], { env }); // warm-up, not counted
    const out = (await timed('wrk', [`-d${seconds}s`, ...args], { env })).stdout;
    const ms = (label: string) => {
      const m = new RegExp(`${label}\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
      if (!m) throw new Error(`wrk output without ${label}: ${out}`);
      return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
    };
    const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
    return {
      query: name,
      requestsPerSecond: Math.round(num(/Requests\/sec:\s+([\d.]+)/)),
      p50Ms: Math.round(ms('50%') * 100) / 100,
      p99Ms: Math.round(ms('99%') * 100) / 100,
      requests: num(/(\d+) requests in/),
      errors: num(/Socket errors: connect (\d+)/),
      non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
      responseBytes,
    };
  }
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
    responseBytes,
  };
}

/** wrk when installed (`apt-get install wrk`), else autocannon (a devDependency). */
export const LOAD_GENERATOR: 'wrk' | 'autocannon' =
  process.argv.includes('--autocannon') || spawnSync('wrk', ['--version']).error ? 'autocannon' : 'wrk';
/** wrk's script that POSTs the body in `BODY` (written by {@link writeWrkScript}). */
export const WRK_SCRIPT = join(OUT, 'post.lua');

/** Writes {@link WRK_SCRIPT}: POST with the JSON body from the `BODY` environment variable. */
export function writeWrkScript(): void {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(
    WRK_SCRIPT,
    'wrk.method = "POST"\nwrk.headers["content-type"] = "application/json"\nwrk.body = os.getenv("BODY")\n',
  );
}

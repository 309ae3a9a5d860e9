/**
 * The read figures of `npm run bench -- --bootstrap` (bench/bootstrap.ts): `entity(mbid)`, `resolve`
 * of 100 MBIDs and `{ __typename }` on the database a bootstrap made, in process (p50 of one request
 * at a time) and over loopback HTTP (bench/load.ts, throughput), with their ratios.
 */
import { openForServing } from '../src/db/readOnly.js';
import { createApp } from '../src/http/app.js';
import { testLogger, testService } from '../test/support/harness.js';
import { type LoadResult, load, startServer } from './load.js';

/** Latencies of `requests` POSTs through the app (in process, no network), one at a time. */
async function requestFigures(
  app: ReturnType<typeof createApp>,
  query: string,
  variables: (i: number) => object,
  requests: number,
) {
  const one = async (i: number) => {
    const response = await app.yoga.fetch('http://bench/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables: variables(i) }),
    });
    const answer = (await response.json()) as { errors?: unknown[] };
    if (answer.errors) throw new Error(`${query}: ${JSON.stringify(answer.errors).slice(0, 500)}`);
  };
  for (let i = 0; i < Math.min(100, requests); i++) await one(i);
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < requests; i++) {
    const t = performance.now();
    await one(i);
    times.push(performance.now() - t);
  }
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  return {
    p50Ms: Number(times[times.length >> 1]!.toFixed(3)),
    p99Ms: Number(times[Math.floor(times.length * 0.99)]!.toFixed(3)),
    perSecond: Math.round(requests / seconds),
  };
}

/** `entity`, `resolve` of 100 and `{ __typename }`, interleaved rounds; the best p50 of each counts. */
export async function readFigures(dbPath: string, dataDir: string, mbids: string[], requests: number) {
  // As `livefeed serve` opens it (its page cache included).
  const store = openForServing(dbPath);
  const app = createApp({ store, service: testService(), logger: testLogger(), dataDir });
  const hundred = (i: number) => Array.from({ length: 100 }, (_, k) => mbids[(i * 100 + k) % mbids.length]!);
  const queries = {
    typename: ['{ __typename }', () => ({})],
    entity: [
      'query($m: ID!) { entity(mbid: $m) { mbid latest { data } } }',
      (i: number) => ({ m: mbids[i % mbids.length] }),
    ],
    resolve100: [
      'query($m: [ID!]!) { resolve(mbids: $m) { status target { mbid } } }',
      (i: number) => ({ m: hundred(i) }),
    ],
  } as const;
  const best: Record<string, { p50Ms: number; p99Ms: number; perSecond: number }> = {};
  try {
    for (let round = 0; round < 3; round++) {
      for (const [name, [query, variables]] of Object.entries(queries)) {
        const figures = await requestFigures(app, query, variables, requests);
        if (!best[name] || figures.p50Ms < best[name]!.p50Ms) best[name] = figures;
      }
    }
  } finally {
    store.close();
  }
  return best;
}

/**
 * The same three queries over loopback HTTP against `livefeed serve`'s app in its own process, as
 * `npm run bench` measures GraphQL (wrk or autocannon, 10 connections, `seconds` each, interleaved
 * rounds; the best of each counts). The body is fixed: one MBID, the first 100.
 */
export async function httpFigures(dbPath: string, mbids: string[], seconds: number, rounds: number) {
  const server = await startServer(dbPath);
  const list = JSON.stringify(mbids.slice(0, 100));
  const queries: [string, string][] = [
    ['typename', '{ __typename }'],
    ['entity', `{ entity(mbid: "${mbids[0]}") { mbid latest { data } } }`],
    ['resolve100', `{ resolve(mbids: ${list}) { status target { mbid } } }`],
  ];
  const best: Record<string, LoadResult> = {};
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [name, query] of queries) {
        const result = await load(server.port, name, query, seconds, server.child.pid);
        if (!best[name] || result.requestsPerSecond > best[name]!.requestsPerSecond) best[name] = result;
      }
    }
  } finally {
    server.child.kill('SIGTERM');
  }
  return best;
}

/** The figures of {@link readFigures} and {@link httpFigures} with their ratios to `{ __typename }`. */
export function readRatios(reads: Awaited<ReturnType<typeof readFigures>>, http: Record<string, LoadResult>) {
  const perSecond = (name: string) => http[name]!.requestsPerSecond;
  return {
    reads,
    entityVsTypename: Number((reads.entity!.p50Ms / reads.typename!.p50Ms).toFixed(2)),
    resolve100VsTypename: Number((reads.resolve100!.p50Ms / reads.typename!.p50Ms).toFixed(2)),
    http,
    // Time per request against `{ __typename }`'s (the inverse of the throughput ratio).
    httpEntityVsTypename: Number((perSecond('typename') / perSecond('entity')).toFixed(2)),
    httpResolve100VsTypename: Number((perSecond('typename') / perSecond('resolve100')).toFixed(2)),
  };
}

/**
 * The `search` benchmark (issue 15): `search` under load with 10 connections (bench/load.ts)
 * on the 1M-entity database the bootstrap benchmark leaves (`npm run bench -- --bootstrap`, at
 * {@link DEFAULT_SEARCH_DB}; another with `--search-db PATH`), against `{ __typename }` on the same
 * server in interleaved rounds (the best round of each counts), with `changeFeed(first: 100)` on
 * the same database. The search load is a mix of requests made from the names in the database
 * (bench/searchMix.ts) sent in turn; the change stream's, the first page and pages deep into it.
 * Targets: search throughput ≥ 0.4 × that of `{ __typename }` and p99 ≤ 20 ms; `changeFeed`
 * ≥ 0.4 ×. Before the load each search case runs alone (one request at a time) for its own
 * latency and match count. Skipped, with a message, when the database is absent. A database made
 * before the search index is migrated first (which fills the index; logged).
 * Run alone: `npm run bench -- --search [--search-db PATH] [--graphql-seconds S] [--graphql-rounds N]`.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openStore } from '../src/db/client.js';
import { BOOTSTRAP_1M_DB } from './bootstrap.js';
import { CHANGE_FEED_CASE, CHANGE_FEED_TARGET, changeFeedBodies } from './changeFeed.js';
import { describeLoad, type LoadResult, load, startServer } from './load.js';
import { type SearchCase, sampleNames, searchBody, searchCases, withSecondPages } from './searchMix.js';

/** Where the bootstrap benchmark leaves its 1M-entity database (bench/bootstrap.ts). */
export const DEFAULT_SEARCH_DB = BOOTSTRAP_1M_DB;

/** Targets of issue 15 for `search` (and `changeFeed(first: 100)` on the same database). */
export const SEARCH_TARGETS = { minRatio: 0.4, maxP99Ms: 20, changeFeedMinRatio: CHANGE_FEED_TARGET };

/** One search case measured alone: its matches and the latency of one request at a time. */
export interface SearchCaseFigures extends SearchCase {
  matches: number;
  p50Ms: number;
  maxMs: number;
}

/** Figures of one search benchmark. */
export interface SearchBenchResult {
  db: string;
  /** Entities in the search index. */
  indexed: number;
  /** Distinct names among {@link SAMPLED} entities spread over the index. */
  distinctNames: number;
  cases: SearchCaseFigures[];
  search: LoadResult;
  changeFeed: LoadResult;
  typename: LoadResult;
  /** search ÷ `{ __typename }` throughput, best rounds. */
  ratio: number;
  /** changeFeed ÷ `{ __typename }` throughput, best rounds. */
  changeFeedRatio: number;
  rounds: LoadResult[][];
}

/** Entities sampled, evenly over the index, for the names the requests are made of. */
const SAMPLED = 200;
/** Requests of each case alone. */
const ALONE = 40;

const SEARCH_MIX = 'search mix (first: 20)';

/** What the benchmark reads of an answer. */
interface SearchAnswer {
  errors?: unknown;
  data?: { search: { totalCount: number } };
}

async function post(url: string, body: string): Promise<{ ms: number; answer: SearchAnswer }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const answer = (await response.json()) as SearchAnswer;
  return { ms: performance.now() - started, answer };
}

/** Each case alone: its match count (`totalCount`, asked once) and up to {@link ALONE} timed requests. */
async function measureCases(url: string, cases: SearchCase[]): Promise<SearchCaseFigures[]> {
  const figures: SearchCaseFigures[] = [];
  for (const c of cases) {
    const counted = searchBody(c).replace('pageInfo {', 'totalCount pageInfo {');
    const { answer } = await post(url, counted);
    if (answer.errors) throw new Error(`search ${JSON.stringify(c.query)}: ${JSON.stringify(answer.errors)}`);
    const times: number[] = [];
    // At most 2 s a case once 5 requests are timed: a slow case says enough by then.
    const until = performance.now() + 2000;
    for (let i = 0; i < ALONE && (i < 5 || performance.now() < until); i++)
      times.push((await post(url, searchBody(c))).ms);
    times.sort((a, b) => a - b);
    const round = (ms: number) => Math.round(ms * 100) / 100;
    figures.push({
      ...c,
      matches: answer.data!.search.totalCount,
      p50Ms: round(times[times.length >> 1]!),
      maxMs: round(times.at(-1)!),
    });
  }
  return figures;
}

/**
 * Runs the search benchmark on `db` (see the module comment); undefined, after logging why, when
 * `db` does not exist.
 * @throws Error when a query answers errors (bench/load.ts, load) or the server fails to start.
 */
export async function searchBench(options: {
  db: string;
  seconds: number;
  rounds: number;
  log: (text: string) => void;
}): Promise<SearchBenchResult | undefined> {
  const { db, log } = options;
  if (!existsSync(db)) {
    log(
      `search: skipped, no database at ${db} (run \`npm run bench -- --bootstrap\` first, or give --search-db)`,
    );
    return undefined;
  }
  const probe = new Database(db, { readonly: true });
  const hasIndex =
    probe.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_index'").get() !== undefined;
  probe.close();
  if (!hasIndex) {
    log(`search: ${db} predates the search index; migrating it (fills the index)`);
    openStore(db).close();
  }
  const store = openStore(db, { readonly: true });
  const indexed = store.sqlite.prepare('SELECT count(*) FROM search_index').pluck().get() as number;
  const names = sampleNames(store.sqlite, SAMPLED);
  const distinctNames = new Set(names.map((n) => n.name)).size;
  const feedBodies = changeFeedBodies(store.sqlite);
  store.close();
  log(
    `search: ${indexed.toLocaleString('en')} entities indexed; ${distinctNames} distinct names among ${names.length} sampled`,
  );

  const server = await startServer(db);
  const url = `http://127.0.0.1:${server.port}/graphql`;
  const rounds: LoadResult[][] = [];
  const bestOf = new Map<string, LoadResult>();
  let cases: SearchCaseFigures[];
  try {
    cases = await measureCases(url, await withSecondPages(url, searchCases(names)));
    for (const c of cases)
      log(
        `  ${c.label}: ${JSON.stringify(c.query)} ${c.matches} matches, alone p50 ${c.p50Ms} ms, max ${c.maxMs} ms`,
      );
    const queries: [string, string | string[]][] = [
      [SEARCH_MIX, cases.filter((c) => !c.aloneOnly).map(searchBody)],
      [CHANGE_FEED_CASE[0], feedBodies],
      ['{ __typename }', '{ __typename }'],
    ];
    for (let round = 1; round <= options.rounds; round++) {
      rounds.push([]);
      for (const [name, text] of queries) {
        const result = await load(server.port, name, text, options.seconds, server.child.pid);
        rounds.at(-1)!.push(result);
        log(`  search round ${round}: ${describeLoad(result)}`);
        const kept = bestOf.get(name);
        if (!kept || result.requestsPerSecond > kept.requestsPerSecond) bestOf.set(name, result);
      }
    }
  } finally {
    server.child.kill('SIGTERM');
  }
  const search = bestOf.get(SEARCH_MIX)!;
  const changeFeed = bestOf.get(CHANGE_FEED_CASE[0])!;
  const typename = bestOf.get('{ __typename }')!;
  const ratioOf = (r: LoadResult) => Number((r.requestsPerSecond / typename.requestsPerSecond).toFixed(2));
  return {
    db,
    indexed,
    distinctNames,
    cases,
    search,
    changeFeed,
    typename,
    ratio: ratioOf(search),
    changeFeedRatio: ratioOf(changeFeed),
    rounds,
  };
}

/** A target row of bench/run.ts. */
export interface TargetRow {
  target: string;
  value: number;
  limit: number;
  pass: boolean;
  /** Only reported, not a target. */
  reportedOnly?: boolean;
  /** Printed in milliseconds (else as a ratio). */
  unit?: 'ms';
}

/** The target rows of a search benchmark (1M entities): search ratio and p99, changeFeed ratio. */
export function searchTargetRows(result: SearchBenchResult): TargetRow[] {
  const { minRatio, maxP99Ms, changeFeedMinRatio } = SEARCH_TARGETS;
  return [
    {
      target: `search ≥ ${minRatio} × { __typename } throughput (1M entities)`,
      value: result.ratio,
      limit: minRatio,
      pass: result.ratio >= minRatio,
    },
    {
      target: `search p99 ≤ ${maxP99Ms} ms (1M entities)`,
      value: result.search.p99Ms,
      limit: maxP99Ms,
      pass: result.search.p99Ms <= maxP99Ms,
      unit: 'ms',
    },
    {
      target: `changeFeed(first: 100) ≥ ${changeFeedMinRatio} × { __typename } throughput (1M entities)`,
      value: result.changeFeedRatio,
      limit: changeFeedMinRatio,
      pass: result.changeFeedRatio >= changeFeedMinRatio,
    },
  ];
}

/**
 * The change stream case of the GraphQL load (issue 15): `changeFeed(first: 100)` with the fields
 * a follower reads, against `{ __typename }` in the same run (target ≥ 0.4×). bench/run.ts adds it
 * to its interleaved rounds. Run alone, `tsx bench/changeFeed.ts DB [seconds]` serves DB as
 * `livefeed serve` does (bench/serverChild.ts) and loads both queries with autocannon for a quick
 * check on any database (for example one `livefeed sync` wrote).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { advanceLatestPacket } from '../src/db/latestPacket.js';
import { encodeFeedCursor } from '../src/graphql/types/changeFeed.js';
import { timed } from './timed.js';

/** Name and query of the case. */
export const CHANGE_FEED_CASE: [name: string, query: string] = [
  'changeFeed(first: 100)',
  `{ changeFeed(first: 100) {
      pageInfo { hasNextPage endCursor }
      nodes {
        ... on EntityChange { mbid type packet position timestamp data }
        ... on EntityRemoval { mbid type packet kind mergedInto timestamp }
      }
    } }`,
];

/**
 * Request bodies of the case as followers send them on a large database (bench/search.ts): the
 * first page, and pages after cursors a quarter, a half and three quarters into the changes held.
 */
export function changeFeedBodies(sqlite: Database.Database): string[] {
  const query = CHANGE_FEED_CASE[1].replace(
    '{ changeFeed(first: 100)',
    'query($after: String) { changeFeed(first: 100, after: $after)',
  );
  const [low, high] = sqlite.prepare('SELECT min(id), max(id) FROM changes').raw().get() as [number, number];
  const at = sqlite.prepare('SELECT id FROM changes WHERE id >= ? ORDER BY id LIMIT 1').pluck();
  const cursors = [0.25, 0.5, 0.75].map((q) =>
    encodeFeedCursor({}, { at: 'change', id: at.get(Math.round(low + (high - low) * q)) as number }),
  );
  return [null, ...cursors].map((after) => JSON.stringify({ query, variables: { after } }));
}

/** Throughput of the case ÷ `{ __typename }`'s that meets the target. */
export const CHANGE_FEED_TARGET = 0.4;

/**
 * Marks every packet of the bench database complete (it holds ingested JSON dumps and no sync
 * bookkeeping) and moves the latest-packet mark as the writer does: the stream serves complete
 * packets only, as after a sync that settled them.
 */
export function settleBenchPackets(dbPath: string): void {
  const db = new Database(dbPath);
  try {
    db.transaction(() => {
      db.prepare('UPDATE packets SET synced_at = coalesce(synced_at, ?)').run(new Date().toISOString());
      advanceLatestPacket(db);
    })();
  } finally {
    db.close();
  }
}

/** The target row of bench/run.ts for the case, when both queries were measured. */
export function changeFeedTarget(
  results: { query: string; requestsPerSecond: number }[],
): { target: string; value: number; limit: number; pass: boolean; reportedOnly?: boolean }[] {
  const feed = results.find((r) => r.query === CHANGE_FEED_CASE[0]);
  const typename = results.find((r) => r.query === '{ __typename }');
  if (!feed || !typename) return [];
  const value = feed.requestsPerSecond / typename.requestsPerSecond;
  return [
    {
      target: `changeFeed(first: 100) ≥ ${CHANGE_FEED_TARGET} × { __typename } throughput`,
      value,
      limit: CHANGE_FEED_TARGET,
      pass: value >= CHANGE_FEED_TARGET,
    },
  ];
}

async function quickCheck(db: string, seconds: number): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('serverChild.ts', import.meta.url)), db],
    {
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.once('data', (chunk) => resolve((JSON.parse(String(chunk)) as { port: number }).port));
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    const url = `http://127.0.0.1:${port}/graphql`;
    const bin = fileURLToPath(new URL('../node_modules/.bin/autocannon', import.meta.url));
    const rates: number[] = [];
    for (const query of [CHANGE_FEED_CASE[1], '{ __typename }']) {
      const body = JSON.stringify({ query });
      const check = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = (await check.json()) as {
        errors?: unknown;
        data?: { changeFeed?: { nodes: unknown[] } };
      };
      if (answer.errors) throw new Error(JSON.stringify(answer.errors));
      const nodes = answer.data?.changeFeed?.nodes.length;
      const args = ['-m', 'POST', '-H', 'content-type=application/json', '-b', body, '-c', '10', '--json'];
      const out = await timed(bin, [...args, '-d', String(seconds), url]);
      const result = JSON.parse(out.stdout) as { requests: { average: number }; latency: { p99: number } };
      rates.push(result.requests.average);
      process.stderr.write(
        `${query.slice(0, 24).replace(/\s+/g, ' ')}: ${result.requests.average} req/s, p99 ${result.latency.p99} ms` +
          `${nodes === undefined ? '' : `, ${nodes} events a page`}\n`,
      );
    }
    process.stderr.write(`ratio ${(rates[0]! / rates[1]!).toFixed(2)} (target ≥ ${CHANGE_FEED_TARGET})\n`);
  } finally {
    child.kill('SIGTERM');
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [db, seconds = '3'] = process.argv.slice(2);
  if (!db) throw new Error('usage: tsx bench/changeFeed.ts DB [seconds]');
  await quickCheck(db, Number(seconds));
}

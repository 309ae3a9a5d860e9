// The GraphQL section of `npm run bench` (bench/run.ts): the page of real-sized lines, an entity,
// the change stream and `{ __typename }` against one server process, in interleaved rounds.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { CHANGE_FEED_CASE, settleBenchPackets } from './changeFeed.js';
import {
  type BenchServer,
  describeLoad,
  type LoadResult,
  load,
  startFixedAnswerServer,
  startServer,
} from './load.js';
import { ensurePageDump, PAGE_PACKET } from './pageLines.js';

/** The row of the page's ceiling: its answer's bytes from a plain server (bench/fixedAnswerChild.ts). */
export const PAGE_CEILING = "the page's answer as fixed bytes from a plain node:http server (ceiling)";

/**
 * Loads the GraphQL server on `dbPath` (the big dump ingested, and the page dump of real-sized
 * lines added) with the three queries, in `rounds` interleaved rounds of `seconds` each; each query
 * keeps its best round (the machine is shared, as for the ingest runs), so the ratios compare the
 * server with itself, not with passing noise. Last in each round, {@link PAGE_CEILING}: the page's
 * answer from a server that does nothing else, the most this load generator lets the page reach.
 */
export async function graphqlLoad(
  dbPath: string,
  { seconds, rounds: roundCount, log }: { seconds: number; rounds: number; log: (text: string) => void },
): Promise<{ best: LoadResult[]; rounds: LoadResult[][] }> {
  const sample = new Database(dbPath, { readonly: true })
    .prepare('SELECT mbid FROM changes ORDER BY id LIMIT 1 OFFSET 1000')
    .get() as { mbid: string };
  // Issue 16: the page is one of real-sized lines (3–7 KB, bench/pageLines.ts).
  const lineBytes = await ensurePageDump(dbPath);
  log(`  page of real-sized lines: ${lineBytes} bytes a line on average`);
  const server = await startServer(dbPath);
  const queries: [string, string, BenchServer?][] = [
    [
      'changes(first: 50) { nodes { mbid data } } (lines of 3–7 KB)',
      `{ changes(packet: ${PAGE_PACKET}, entity: RECORDING, first: 50) { nodes { mbid data } } }`,
    ],
    ['entity(mbid) { latest { data } }', `{ entity(mbid: "${sample.mbid}") { mbid latest { data } } }`],
    CHANGE_FEED_CASE,
    ['{ __typename }', '{ __typename }'],
  ];
  // The change stream serves complete packets only (issue 15).
  settleBenchPackets(dbPath);
  let ceiling: BenchServer | undefined;
  try {
    ceiling = await startFixedAnswerServer(await savePageAnswer(server.port, queries[0]![1], dbPath));
    queries.push([PAGE_CEILING, queries[0]![1], ceiling]);
    const bestOf = new Map<string, LoadResult>();
    const rounds: LoadResult[][] = [];
    for (let round = 1; round <= roundCount; round++) {
      rounds.push([]);
      for (const [name, query, target = server] of queries) {
        const result = await load(target.port, name, query, seconds, target.child.pid);
        rounds.at(-1)!.push(result);
        log(`  graphql round ${round}: ${describeLoad(result)}`);
        const kept = bestOf.get(name);
        if (!kept || result.requestsPerSecond > kept.requestsPerSecond) bestOf.set(name, result);
      }
    }
    return { best: queries.map(([name]) => bestOf.get(name)!), rounds };
  } finally {
    server.child.kill('SIGTERM');
    ceiling?.child.kill('SIGTERM');
  }
}

/** The answer of `query` from the server on `port`, written beside the database; returns its path. */
async function savePageAnswer(port: number, query: string, dbPath: string): Promise<string> {
  const answer = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const path = join(dirname(dbPath), 'page-answer.json');
  writeFileSync(path, Buffer.from(await answer.arrayBuffer()));
  return path;
}

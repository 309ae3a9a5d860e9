// The GraphQL section of `npm run bench` (bench/run.ts): the page of real-sized lines, an entity,
// the change stream and `{ __typename }` against one server process, in interleaved rounds.
import Database from 'better-sqlite3';
import { CHANGE_FEED_CASE, settleBenchPackets } from './changeFeed.js';
import { describeLoad, type LoadResult, load, startServer } from './load.js';
import { ensurePageDump, PAGE_PACKET } from './pageLines.js';

/**
 * Loads the GraphQL server on `dbPath` (the big dump ingested, and the page dump of real-sized
 * lines added) with the three queries, in
 * `rounds` interleaved rounds of `seconds` each; each query keeps its best round (the machine is shared, as
 * for the ingest runs), so the ratios compare the server with itself, not with passing noise.
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
  const queries: [string, string][] = [
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
  try {
    const bestOf = new Map<string, LoadResult>();
    const rounds: LoadResult[][] = [];
    for (let round = 1; round <= roundCount; round++) {
      rounds.push([]);
      for (const [name, query] of queries) {
        const result = await load(server.port, name, query, seconds, server.child.pid);
        rounds.at(-1)!.push(result);
        log(`  graphql round ${round}: ${describeLoad(result)}`);
        const kept = bestOf.get(name);
        if (!kept || result.requestsPerSecond > kept.requestsPerSecond) bestOf.set(name, result);
      }
    }
    return { best: queries.map(([name]) => bestOf.get(name)!), rounds };
  } finally {
    server.child.kill('SIGTERM');
  }
}

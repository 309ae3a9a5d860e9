/**
 * The `search` benchmark (issue 15): `search` under load with 10 connections (bench/load.ts)
 * on the 1M-entity database the bootstrap benchmark leaves (`npm run bench -- --bootstrap`, at
 * {@link DEFAULT_SEARCH_DB}; another with `--search-db PATH`), against `{ __typename }` on the same
 * server in interleaved rounds (the best round of each counts). Targets: throughput ≥ 0.4 × that of
 * `{ __typename }`, p99 ≤ 20 ms. Skipped, with a message, when the database is absent. A database
 * made before the search index is migrated first (which fills the index; logged).
 * Run alone: `npm run bench -- --search [--search-db PATH] [--graphql-seconds S] [--graphql-rounds N]`.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openStore } from '../src/db/client.js';
import { TITLED_ENTITY_TYPES } from '../src/db/searchIndex.js';
import { searchCount } from '../src/db/searchQueries.js';
import { matchExpression } from '../src/graphql/searchSyntax.js';
import { BOOTSTRAP_1M_DB } from './bootstrap.js';
import { type LoadResult, load, startServer } from './load.js';

/** Where the bootstrap benchmark leaves its 1M-entity database (bench/bootstrap.ts). */
export const DEFAULT_SEARCH_DB = BOOTSTRAP_1M_DB;

/** Targets of issue 15 for `search`. */
export const SEARCH_TARGETS = { minRatio: 0.4, maxP99Ms: 20 };

/** Figures of one search benchmark. */
export interface SearchBenchResult {
  db: string;
  /** Entities in the search index. */
  indexed: number;
  /** The query typed, and how many entities it matches. */
  query: string;
  matches: number;
  search: LoadResult;
  typename: LoadResult;
  /** search ÷ `{ __typename }` throughput, best rounds. */
  ratio: number;
  rounds: LoadResult[][];
}

/**
 * A query as a user types it: the first two words of the name of an entity from the middle of the
 * index, the second cut to its first three letters (the prefix of search as you type).
 */
function typedQuery(sqlite: Database.Database): string {
  const titled = TITLED_ENTITY_TYPES.map((t) => `'${t}'`).join(', ');
  const name = sqlite
    .prepare(
      `SELECT json_extract(c.data, iif(c.entity IN (${titled}), '$.title', '$.name')) FROM search_index s
       JOIN changes c ON c.id = s.rowid WHERE s.rowid >= (SELECT (min(rowid) + max(rowid)) / 2 FROM search_index)
       AND json_extract(c.data, iif(c.entity IN (${titled}), '$.title', '$.name')) LIKE '% %' LIMIT 1`,
    )
    .pluck()
    .get() as string | undefined;
  const words = (name ?? 'the').split(/\s+/).slice(0, 2);
  if (words.length === 2) words[1] = words[1]!.slice(0, 3);
  return words.join(' ');
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
  const query = typedQuery(store.sqlite);
  const matches = searchCount(store, { match: matchExpression(query), slots: null });
  store.close();
  log(
    `search: ${indexed.toLocaleString('en')} entities indexed; query ${JSON.stringify(query)} matches ${matches}`,
  );

  const server = await startServer(db);
  const queries: [string, string][] = [
    [
      'search(first: 20)',
      `{ search(query: ${JSON.stringify(query)}, first: 20) { edges { score node { mbid type latest { name } } } } }`,
    ],
    ['{ __typename }', '{ __typename }'],
  ];
  const rounds: LoadResult[][] = [];
  const bestOf = new Map<string, LoadResult>();
  try {
    for (let round = 1; round <= options.rounds; round++) {
      rounds.push([]);
      for (const [name, text] of queries) {
        const result = await load(server.port, name, text, options.seconds);
        rounds.at(-1)!.push(result);
        log(`  search round ${round}: ${name} ${result.requestsPerSecond} req/s, p99 ${result.p99Ms} ms`);
        const kept = bestOf.get(name);
        if (!kept || result.requestsPerSecond > kept.requestsPerSecond) bestOf.set(name, result);
      }
    }
  } finally {
    server.child.kill('SIGTERM');
  }
  const search = bestOf.get('search(first: 20)')!;
  const typename = bestOf.get('{ __typename }')!;
  const ratio = Number((search.requestsPerSecond / typename.requestsPerSecond).toFixed(2));
  return { db, indexed, query, matches, search, typename, ratio, rounds };
}

/**
 * `npm run bench` year section (issue 16: a year of operation, cost must not grow with age): builds
 * (or reuses) a year-sized database and a 24-packet one with the same recipe per packet
 * (bench/yearDb.ts), then times each query and endpoint on both, interleaved request by request,
 * and prints the p50 ratio (target ≤ 1.5 ×). Writes bench/out/year.json. Options: `--year-packets N`
 * (default 8760), `--year-changes N` (default 3,500,000), `--year-versions N` (versions of one
 * artist, default 2000), `--year-samples N` (requests per query and database, default 300).
 * `tsx bench/run.ts --year` runs only this section.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, type Store } from '../src/db/client.js';
import { sqliteReads } from '../src/db/reads.js';
import { encodeFeedCursor } from '../src/graphql/types/changeFeed.js';
import { createApp } from '../src/http/app.js';
import { DEFAULT_FRESHNESS } from '../src/ops/freshness.js';
import { collectStatus } from '../src/ops/statusReport.js';
import { testLogger, testService } from '../test/support/harness.js';
import { buildYearDb, FIRST_PACKET, VERSIONED_ARTIST, type YearRecipe } from './yearDb.js';

const OUT = fileURLToPath(new URL('./out/', import.meta.url));
const TARGET = 1.5;

function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}

/** One database served over HTTP on 127.0.0.1:0, as `livefeed serve` serves it. */
interface Served {
  store: Store;
  server: Server;
  origin: string;
}

async function serve(path: string): Promise<Served> {
  const store = openStore(path, { readonly: true });
  const app = createApp({ store, service: testService(), logger: testLogger(), dataDir: OUT });
  const server = createServer(app.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { store, server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A measured operation: one call against one database, failing loudly on a wrong answer. */
type Probe = (db: Served) => Promise<void>;

function graphql(query: string): Probe {
  const body = JSON.stringify({ query });
  return async (db) => {
    const response = await fetch(`${db.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    if (!response.ok || text.includes('"errors"'))
      throw new Error(`${query}: ${response.status} ${text.slice(0, 300)}`);
  };
}

function get(path: string, ok = [200]): Probe {
  return async (db) => {
    const response = await fetch(`${db.origin}${path}`);
    await response.arrayBuffer();
    if (!ok.includes(response.status)) throw new Error(`${path}: ${response.status}`);
  };
}

/**
 * GraphiQL's page as a browser opens it again: the example query made from the data held
 * (src/http/exampleQuery.ts) on every request, then 304 by the ETag of the first answer, so the
 * 9 MB page's transfer does not hide the reads.
 */
function graphiqlRevisit(): Probe {
  const etags = new Map<string, string>();
  return async (db) => {
    const headers: Record<string, string> = { accept: 'text/html', 'accept-encoding': 'br' };
    const etag = etags.get(db.origin);
    if (etag) headers['if-none-match'] = etag;
    const response = await fetch(`${db.origin}/graphql`, { headers });
    await response.arrayBuffer();
    if (response.status === 200) etags.set(db.origin, response.headers.get('etag')!);
    else if (response.status !== 304) throw new Error(`GET /graphql (GraphiQL): ${response.status}`);
  };
}

/**
 * A follower's next page of the change stream: `changeFeed(first: 100)` after the end of the packet
 * two before the newest (each database's own), so both read the same share of a packet's events.
 */
function changeFeedNearTheHead(): Probe {
  const bodies = new Map<string, string>();
  return async (db) => {
    let body = bodies.get(db.origin);
    if (!body) {
      const latest = (await sqliteReads(db.store).latestPacket())!.number;
      const after = encodeFeedCursor({}, { at: 'packetEnd', packet: latest - 2 });
      body = JSON.stringify({
        query: `{ changeFeed(first: 100, after: "${after}") { pageInfo { endCursor }
          nodes { ... on EntityChange { mbid packet data } ... on EntityRemoval { mbid packet kind } } } }`,
      });
      bodies.set(db.origin, body);
    }
    const response = await fetch(`${db.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    if (!response.ok || text.includes('"errors"') || !text.includes('"mbid"'))
      throw new Error(`changeFeed near the head: ${response.status} ${text.slice(0, 300)}`);
  };
}

const status: Probe = async (db) => {
  await collectStatus(sqliteReads(db.store), {
    display: db.store.path,
    demo: false,
    upstream: { kind: 'not-asked', reason: 'bench' },
    thresholds: DEFAULT_FRESHNESS,
  });
};

const PROBES: [string, Probe][] = [
  [
    'entity(mbid) { latest { packet } } (2,000-version artist)',
    graphql(`{ entity(mbid: "${VERSIONED_ARTIST}") { latest { packet } } }`),
  ],
  [
    'entity(mbid) { history { nodes { packet data } } } (first page)',
    graphql(`{ entity(mbid: "${VERSIONED_ARTIST}") { history { nodes { packet data } } } }`),
  ],
  ['latestPacket { number timestamp }', graphql('{ latestPacket { number timestamp } }')],
  ['removals { nodes { mbid packet kind } }', graphql('{ removals { nodes { mbid packet kind } } }')],
  [
    'failures { totalCount nodes { packet status } }',
    graphql('{ failures { totalCount nodes { packet status } } }'),
  ],
  ['changeFeed(first: 100, after: two packets before the newest)', changeFeedNearTheHead()],
  // The bench databases are old on purpose: CRITICAL (503) is their right answer.
  ['GET /freshness', get('/freshness', [200, 503])],
  ['GET /metrics', get('/metrics')],
  ['GET /api/musicbrainz/replication-info', get('/api/musicbrainz/replication-info')],
  // GraphiQL's page, whose example query is made from the newest packet with changes.
  ['GET /graphql (GraphiQL page, revisited: 304)', graphiqlRevisit()],
  ['livefeed status (collectStatus)', status],
];

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** One row of the year table. Times in milliseconds. */
export interface YearFigure {
  probe: string;
  yearP50Ms: number;
  dayP50Ms: number;
  ratio: number;
}

async function measure(year: Served, day: Served, samples: number): Promise<YearFigure[]> {
  const figures: YearFigure[] = [];
  for (const [name, probe] of PROBES) {
    for (let i = 0; i < 20; i++) await Promise.all([probe(year), probe(day)]); // warm-up
    const times = { year: [] as number[], day: [] as number[] };
    for (let i = 0; i < samples; i++) {
      // Interleaved, one request at a time: drift on the shared machine hits both alike.
      for (const [db, list] of i % 2
        ? ([
            [year, times.year],
            [day, times.day],
          ] as const)
        : ([
            [day, times.day],
            [year, times.year],
          ] as const)) {
        const t = performance.now();
        await probe(db);
        list.push(performance.now() - t);
      }
    }
    const [y, d] = [p50(times.year), p50(times.day)];
    figures.push({ probe: name, yearP50Ms: y, dayP50Ms: d, ratio: y / d });
  }
  return figures;
}

/** Builds both databases, measures, prints the table and writes bench/out/year.json. */
export async function main(argv: string[]): Promise<YearFigure[]> {
  const log = (text: string) => process.stderr.write(`${text}\n`);
  const recipe: YearRecipe = {
    packets: option(argv, '--year-packets', 8760),
    changes: option(argv, '--year-changes', 3_500_000),
    versions: option(argv, '--year-versions', 2000),
  };
  const day: YearRecipe = {
    packets: 24,
    changes: Math.round((recipe.changes / recipe.packets) * 24),
    versions: 24,
  };
  const name = (r: YearRecipe) => join(OUT, `year-${r.packets}p-${r.changes}c-${r.versions}v.db`);
  log(
    `year database: ${recipe.packets} packets (${FIRST_PACKET}..), ${recipe.changes} changes, ${recipe.versions} versions of one artist`,
  );
  await buildYearDb(name(recipe), recipe, log);
  await buildYearDb(name(day), day, log);
  const [a, b] = [await serve(name(recipe)), await serve(name(day))];
  try {
    const figures = await measure(a, b, option(argv, '--year-samples', 300));
    const rows = figures.map(
      (f) =>
        `| ${f.probe} | ${f.yearP50Ms.toFixed(2)} ms | ${f.dayP50Ms.toFixed(2)} ms | ${f.ratio.toFixed(2)} × | ${f.ratio <= TARGET ? 'met' : 'NOT met'} |`,
    );
    process.stdout.write(
      [
        `\n**A year of operation**: ${recipe.packets} packets, ${recipe.changes} changes ÷ 24 packets (p50, interleaved):\n`,
        `| query or endpoint | year | 24 packets | ratio | ≤ ${TARGET} × |`,
        '|---|---:|---:|---:|---|',
        ...rows,
        '',
      ].join('\n'),
    );
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(OUT, 'year.json'), `${JSON.stringify({ recipe, figures }, null, 2)}\n`);
    return figures;
  } finally {
    for (const db of [a, b]) {
      db.server.closeAllConnections();
      db.server.close();
      db.store.close();
    }
  }
}

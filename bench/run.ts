import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { changeFeedTarget } from './changeFeed.js';
import { graphqlLoad } from './graphqlLoad.js';
import {
  floor,
  type IngestRun,
  ingestRss,
  lastJson,
  node,
  ours,
  plainScript,
  removeDb,
} from './ingestRuns.js';
import { type BenchInputs, buildInputs } from './inputs.js';
import { describeLoad, type LoadResult } from './load.js';
import { PAGE_NOTES } from './pageLines.js';
import { NOTES } from './resultsNotes.js';
import { ingestTargets, machine, mb, runTable, s, tool } from './runTable.js';
import { DEFAULT_SEARCH_DB, searchBench, searchTargetRows, type TargetRow } from './search.js';
import { benchSyncProcess, syncProcessReport } from './syncProcess.js';
import { timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'bench', 'out');
const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const RUNS = option('--runs', 5);
const GRAPHQL_SECONDS = option('--graphql-seconds', 5);
const GRAPHQL_ROUNDS = option('--graphql-rounds', 5);
const log = (text: string) => process.stderr.write(`${text}\n`);
const graphqlOptions = { seconds: GRAPHQL_SECONDS, rounds: GRAPHQL_ROUNDS, log };
/** Options of the search benchmark: `--search-db PATH` (default the bootstrap benchmark's database). */
const searchOptions = () => {
  const i = argv.indexOf('--search-db');
  const db = i >= 0 && argv[i + 1] ? argv[i + 1]! : DEFAULT_SEARCH_DB;
  return { db, seconds: GRAPHQL_SECONDS, rounds: GRAPHQL_ROUNDS, log };
};

// ------------------------------------------------------------------------------------------------
// Report

const best = (values: number[]) => Math.min(...values);

/** Sections of RESULTS.md written by hand from the other benchmarks (from {@link KEPT_HEADING} on), kept. */
const KEPT_HEADING = '\n## Full dump bootstrap';
function keptSections(path: string): string {
  const previous = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const at = previous.indexOf(KEPT_HEADING);
  return at < 0 ? '' : previous.slice(at);
}

async function main(): Promise<void> {
  // Issue 17: the ingest into PostgreSQL against psql's \copy (bench/postgres.ts); needs no sqlite3 or python3.
  if (flag('--postgres')) {
    await (await import('./postgres.js')).main(argv);
    return;
  }
  // Issues 14 and 17: `livefeed bootstrap` into PostgreSQL against psql's \copy (bench/bootstrapPostgres.ts).
  if (flag('--bootstrap-postgres')) {
    await (await import('./bootstrapPostgres.js')).main(argv);
    return;
  }
  // Issue 17: the page throughput of one and two servers over PostgreSQL against one over SQLite.
  if (flag('--postgres-pages')) {
    await (await import('./postgresPages.js')).main(argv);
    return;
  }
  for (const [cmd, args] of [
    ['xz', ['--version']],
    ['tar', ['--version']],
    ['sqlite3', ['--version']],
    ['python3', ['--version']],
    ['bzip2', ['--version']],
  ] as const) {
    if (tool(cmd, [...args]) === 'missing' && cmd !== 'bzip2')
      throw new Error(`npm run bench needs ${cmd} on PATH`);
  }
  // Issue 16: only `sync --once` as a process (bench/syncProcess.ts).
  if (flag('--sync-process')) {
    const results = await benchSyncProcess(OUT, { runs: RUNS, scale: option('--scale', 1), log });
    log(syncProcessReport(results).lines.join('\n'));
    return;
  }
  // Issue 14: the full dump bootstrap section (bench/bootstrap.ts), on its own inputs.
  if (flag('--bootstrap')) {
    await (await import('./bootstrap.js')).main(argv);
    return;
  }
  // Issue 16: a year of operation (bench/year.ts), on its own generated databases.
  if (flag('--year')) {
    await (await import('./year.js')).main(argv);
    return;
  }
  // Issue 15: `search` on the bootstrap benchmark's database (bench/search.ts).
  if (flag('--search')) {
    const result = await searchBench(searchOptions());
    if (!result) return;
    for (const t of searchTargetRows(result))
      log(
        `${t.target}: ${t.value.toFixed(2)}${t.unit === 'ms' ? ' ms' : ' ×'} ${t.pass ? 'met' : 'NOT MET'}`,
      );
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const inputs: BenchInputs = await buildInputs(OUT, { rebuild: flag('--rebuild'), log });
  const { big, small, longLines, packet } = inputs;
  const db = (name: string) => join(OUT, `${name}.db`);
  if (flag('--graphql-only')) {
    for (const g of (await graphqlLoad(db('ours'), graphqlOptions)).best) log(`  ${describeLoad(g)}`);
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
    log(
      `  run ${r + 1}: floor ${s(floorMs.at(-1)!)}, livefeed ${s(oursRuns.at(-1)!.ms)} + checkpoint ${s(oursRuns.at(-1)!.checkpointMs)}, plain script ${s(plainMs.at(-1)!)}`,
    );
  }
  const lzmaNative = await ours(big, db('ours-lzma-native'), 'lzma-native');
  log(`  livefeed with lzma-native: ${s(lzmaNative.ms)}`);
  removeDb(db('ours-lzma-native'));
  const smallRun = await ours(small, db('small'));
  const longRun = await ours(longLines, db('long'));
  removeDb(db('small'));
  removeDb(db('long'));
  log(
    `  RSS (livefeed process): big ${oursRuns.at(-1)!.maxRssMb} MB, small ${smallRun.maxRssMb} MB, long lines ${longRun.maxRssMb} MB`,
  );

  const decode = async (decoder: string, file: string) => {
    try {
      return lastJson<{ ms: number; cpuMs: number; maxRssMb: number }>(
        await node('decodeChild.ts', [decoder, file]),
      );
    } catch (error) {
      if (decoder === 'node-liblzma') return undefined; // optional comparison, not installed
      throw error;
    }
  };
  const xzRun = await timed('sh', ['-c', 'xz -dc "$1" > /dev/null', 'sh', big.path]);
  const xzAlone = xzRun.ms;
  const xzRssMb = xzRun.treeRssMb ?? 10;
  const decoders = {
    'xz -dc (C, alone)': { ms: xzAlone },
    'lzma-native (liblzma 5.2 in-process)': await decode('lzma-native', big.path),
    'xz child process (livefeed default)': await decode('xz-process', big.path),
    'node-liblzma (not a dependency)': await decode('node-liblzma', big.path),
  };
  log(
    `  decoders: ${Object.entries(decoders)
      .map(([k, v]) => `${k} ${v ? s(v.ms) : 'n/a'}`)
      .join(', ')}`,
  );

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

  // Issue 16: what users run, `sync --once` as a process (bench/syncProcess.ts).
  const syncProcess = await benchSyncProcess(OUT, { runs: Math.min(RUNS, 3), log });
  const syncSection = syncProcessReport(syncProcess);

  let graphql: LoadResult[] = [];
  let graphqlRounds: LoadResult[][] = [];
  if (!flag('--skip-graphql')) {
    if (!existsSync(db('ours'))) await ours(big, db('ours'));
    const load = await graphqlLoad(db('ours'), graphqlOptions);
    graphql = load.best;
    graphqlRounds = load.rounds;
    for (const g of graphql) log(`  ${describeLoad(g)}`);
  }
  const search = flag('--skip-graphql') ? undefined : await searchBench(searchOptions());

  // ---- figures and targets
  const floorBest = best(floorMs);
  const plainBest = best(plainMs);
  const oursBest = best(oursRuns.map((r) => r.ms));
  const oursWithCheckpointBest = best(oursRuns.map((r) => r.ms + r.checkpointMs));
  const peakRss = Math.max(...[...oursRuns, smallRun, longRun].map((r) => ingestRss(r, xzRssMb)));
  const typename = graphql.find((g) => g.query === '{ __typename }');
  const pageLoad = graphql[0];
  const pageRatio =
    typename && pageLoad ? pageLoad.requestsPerSecond / typename.requestsPerSecond : undefined;
  const searchTargets = search ? searchTargetRows(search) : [];
  const targets: TargetRow[] = [
    ...ingestTargets({ oursBest, oursWithCheckpointBest, floorBest, plainBest, peakRss, pageRatio }),
    ...changeFeedTarget(graphql),
    ...syncSection.targets,
    ...searchTargets,
  ];

  const table = runTable({
    runs: RUNS,
    graphqlSeconds: GRAPHQL_SECONDS,
    graphqlRounds: GRAPHQL_ROUNDS,
    inputs,
    floorBest,
    plainBest,
    oursBest,
    oursWithCheckpointBest,
    lzmaNative,
    decoders,
    xzRssMb,
    oursRuns,
    smallRun,
    longRun,
    bzip2Alone,
    unbzip2: unbzip2!,
    bzip2Process: bzip2Process!,
    packetRun,
    graphql,
    graphqlRoundResults: graphqlRounds,
    syncLines: syncSection.lines,
    targets,
  });
  process.stdout.write(`${table}\n`);
  const report = {
    date: new Date().toISOString(),
    machine: machine(),
    runs: RUNS,
    inputs,
    search,
    jsonDump: {
      floorMs,
      plainScriptMs: plainMs,
      livefeed: oursRuns,
      livefeedLzmaNative: lzmaNative,
      best: {
        floorMs: floorBest,
        plainScriptMs: plainBest,
        livefeedMs: oursBest,
        livefeedWithCheckpointMs: oursWithCheckpointBest,
      },
      rss: {
        xzMb: xzRssMb,
        big: ingestRss(oursRuns.at(-1)!, xzRssMb),
        small: ingestRss(smallRun, xzRssMb),
        longLines: ingestRss(longRun, xzRssMb),
      },
      decoders,
    },
    packet: { bzip2AloneMs: bzip2Alone, unbzip2Stream: unbzip2, bzip2Process, store: packetRun },
    graphql,
    graphqlRounds,
    syncProcess,
    targets,
  };
  writeFileSync(join(OUT, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  const results = join(ROOT, 'bench', 'RESULTS.md');
  writeFileSync(
    results,
    `# Benchmark results\n\nThe latest \`npm run bench\` (bench/run.ts; the JSON report is bench/out/report.json).\n\n${table}\n\n${NOTES}\n${PAGE_NOTES}${keptSections(results)}`,
  );
  if (targets.some((t) => !t.pass && !t.reportedOnly)) process.exitCode = 1;
}

await main();
// Issue 16: the year section runs after the whole bench (`--skip-year` leaves it out, `--year` runs
// it alone); never after a section run alone.
const ALONE = [
  '--year',
  '--bootstrap',
  '--graphql-only',
  '--sync-process',
  '--search',
  '--postgres',
  '--postgres-pages',
  '--bootstrap-postgres',
  '--skip-year',
];
if (!ALONE.some(flag)) await (await import('./year.js')).main(argv);

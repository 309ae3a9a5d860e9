import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { openStore } from '../src/db/client.js';
import { createApp } from '../src/http/app.js';
import { startSampleFeed } from '../src/samplefeed/server.js';
import { writeJsonDump } from '../test/support/archives.js';
import { testLogger, testService } from '../test/support/harness.js';
import { timed } from './timed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const DUMP = '20260101-001';
const PACKET = 190000;

function sampleLines(): string[] {
  const dir = existsSync('/work/shared/samples') ? '/work/shared/samples' : join(ROOT, 'fixtures/samples');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n'))
    .filter((line) => line.trim() !== '');
}

/** `count` sample lines in a scrambled cycle, every UUID fresh; `counter` gets lines, bytes, MBIDs. */
function* shapedLines(count: number, counter: { bytes: number; mbids: string[] }): Generator<string> {
  const samples = sampleLines();
  for (let i = 0; i < count; i++) {
    const line = samples[(i * 7919) % samples.length]!.replace(UUID, () => randomUUID());
    counter.bytes += Buffer.byteLength(line) + 1;
    // Keep a spread of MBIDs for the GraphQL figures (the line's own `id`).
    if (i % Math.max(1, Math.floor(count / 1000)) === 0)
      counter.mbids.push((JSON.parse(line) as { id: string }).id);
    yield line;
  }
}

async function floorMs(archive: string, db: string, lines: number): Promise<number> {
  const script =
    'xz -dc "$1" | tar -xO mbdump/recording | sqlite3 "$2" "CREATE TABLE t(line TEXT)" ".mode ascii" "$3" ".import /dev/stdin t"';
  const run = await timed('sh', ['-c', script, 'sh', archive, db, '.separator "\x1f" "\\n"']);
  const rows = new Database(db, { readonly: true }).prepare('SELECT count(*) FROM t').pluck().get();
  if (rows !== lines) throw new Error(`floor stored ${rows} rows, expected ${lines}`);
  return run.ms;
}

/** Mean ms of `requests` POSTs of `query` through the app (in process, no network). */
async function meanRequestMs(
  app: ReturnType<typeof createApp>,
  query: string,
  variables: object,
  requests: number,
) {
  const body = JSON.stringify({ query, variables });
  const one = async () => {
    const response = await app.yoga.fetch('http://bench/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    const answer = (await response.json()) as { errors?: unknown[] };
    if (answer.errors) throw new Error(`${query}: ${JSON.stringify(answer.errors).slice(0, 500)}`);
  };
  for (let i = 0; i < Math.min(50, requests); i++) await one();
  const started = performance.now();
  for (let i = 0; i < requests; i++) await one();
  return (performance.now() - started) / requests;
}

/** Runs the benchmark; resolves to the figures (also printed as one JSON line). */
export async function main(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const { values } = parseArgs({
    args: argv,
    options: {
      lines: { type: 'string', default: '1000000' },
      requests: { type: 'string', default: '500' },
      bootstrap: { type: 'boolean' },
    },
    strict: false,
  });
  const lineCount = Number(values.lines);
  const work = await mkdtemp(join(tmpdir(), 'lf-bench-bootstrap-'));
  try {
    const log = (text: string) => process.stderr.write(`${text}\n`);
    log(`building a full dump of ${lineCount} lines in ${work}`);
    const counter = { bytes: 0, mbids: [] as string[] };
    const built = await writeJsonDump(join(work, 'build'), {
      packet: PACKET,
      entity: 'recording',
      lines: shapedLines(lineCount, counter),
    });
    const feedRoot = join(work, 'feed');
    await mkdir(join(feedRoot, 'full-json-dumps', DUMP), { recursive: true });
    const archive = join(feedRoot, 'full-json-dumps', DUMP, 'recording.tar.xz');
    await rename(built.path, archive);
    await writeFile(join(feedRoot, 'full-json-dumps', 'LATEST'), `${DUMP}\n`);
    const feed = await startSampleFeed({ root: feedRoot });
    const dataDir = join(work, 'data');
    let bootstrap: Awaited<ReturnType<typeof timed>>;
    try {
      log('livefeed bootstrap ...');
      bootstrap = await timed(process.execPath, [
        '--import',
        'tsx',
        join(ROOT, 'src/cli/main.ts'),
        'bootstrap',
        '--dumps-url',
        feed.dumpsUrl,
        '--entities',
        'recording',
        '--data-dir',
        dataDir,
        '--log-level',
        'warn',
      ]);
    } finally {
      await feed.close();
    }
    log('floor: xz -dc | tar -xO | sqlite3 .import ...');
    const floor = await floorMs(archive, join(work, 'floor.db'), lineCount);
    const dbPath = join(dataDir, 'livefeed.db');
    const store = openStore(dbPath);
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const dbBytes = statSync(dbPath).size;
    const app = createApp({ store, service: testService(), logger: testLogger(), dataDir });
    const requests = Number(values.requests);
    const hundred = counter.mbids.slice(0, 100);
    const typename = await meanRequestMs(app, '{ __typename }', {}, requests);
    const entity = await meanRequestMs(
      app,
      'query($m: ID!) { entity(mbid: $m) { mbid latest { data } } }',
      { m: hundred[0] },
      requests,
    );
    const resolve = await meanRequestMs(
      app,
      'query($m: [ID!]!) { resolve(mbids: $m) { status target { mbid } } }',
      { m: hundred },
      requests,
    );
    store.close();
    const figures = {
      lines: lineCount,
      uncompressedBytes: counter.bytes,
      archiveBytes: statSync(archive).size,
      bootstrapMs: Math.round(bootstrap.ms),
      floorMs: Math.round(floor),
      timeVsFloor: Number((bootstrap.ms / floor).toFixed(2)),
      peakRssMb: bootstrap.treeRssMb ?? null,
      dbBytes,
      dbVsLines: Number((dbBytes / counter.bytes).toFixed(2)),
      typenameMs: Number(typename.toFixed(3)),
      entityMs: Number(entity.toFixed(3)),
      resolve100Ms: Number(resolve.toFixed(3)),
      entityVsTypename: Number((entity / typename).toFixed(2)),
      resolveVsTypename: Number((resolve / typename).toFixed(2)),
    };
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    return figures;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { copyFile, cp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FeedClient } from '../../src/feed/client.js';
import { redactUrl } from '../../src/feed/protocol/urls.js';
import { createApp } from '../../src/http/app.js';
import { BUNDLED_FEED_ROOT, createSampleFeedHandler, startSampleFeed } from '../../src/samplefeed/server.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { cliEnv } from '../support/cli.js';
import { gql, syncContextOn, tempDir, testLogger, testService } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { runAsCluster } from '../support/postgres.js';
import { rawRequest } from '../support/rawHttp.js';
import { serveApp } from '../support/serveApp.js';
import { describeStores, type StoreKind, type TestDatabase } from '../support/stores.js';

/** Recognisable tokens of upstream's shape (40 × [A-Za-z0-9]); neither may appear in any output. */
const TOKEN = 'CanaryUpstreamTokenLeakCheck7Q3xZ9000042';
const WRONG = 'CanaryWrongTokenLeakCheck7Q3xZ9000000099';
const REPO = fileURLToPath(new URL('../..', import.meta.url));

const manifest = readBundledManifest();
const dumps = manifest.packets.flatMap((p) => Object.values(p.jsonDumps));
// Faults, all in recent packets so that the CLI's default window (latest − 23) includes them.
const badSignature = dumps.at(-1)!;
const noSignature = dumps.at(-2)!;
const cutConnection = dumps.at(-3)!;

function errorTexts(error: unknown): string {
  const e = error as Error & Record<string, unknown>;
  return [String(e), e.message, e.stack, JSON.stringify(e), JSON.stringify(Object.entries(e))].join('\n');
}

/** Every regular file under `dir`, as bytes. */
async function filesUnder(dir: string): Promise<{ path: string; bytes: Buffer }[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => {
      const path = join(e.parentPath, e.name);
      return { path, bytes: readFileSync(path) };
    });
}

/**
 * The bytes a database holds, as text: a SQLite file is among the data folder's files; a
 * PostgreSQL database is read whole by `pg_dump` (every table's rows; its files belong to the
 * cluster, not to the data folder).
 */
async function databaseText(db: TestDatabase): Promise<{ where: string; text: string }[]> {
  if (db.store.kind === 'sqlite') return [];
  return [
    { where: `pg_dump of ${db.store.display}`, text: await runAsCluster('pg_dump', ['--dbname', db.db]) },
  ];
}

/** Runs the CLI from source (tsx) with `env` added; resolves to exit code, stdout and stderr. */
function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: REPO, env: cliEnv(env), timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describeStores('token hygiene: the upstream token appears in no output (issue 4)', (stores: StoreKind) => {
  /** Every output of the run, by where it came from. */
  const outputs: { where: string; text: string }[] = [];
  const record = (where: string, value: unknown) =>
    outputs.push({ where, text: typeof value === 'string' ? value : JSON.stringify(value) });
  /** The databases of the run, read whole at the end. */
  const databases: TestDatabase[] = [];
  const open = async (dir: string) => {
    const db = await stores.create(dir);
    databases.push(db);
    return db;
  };
  let root: Awaited<ReturnType<typeof tempDir>>;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let cliData: Awaited<ReturnType<typeof tempDir>>;
  let server: Server;
  let feedRoot: string;
  /** Feed paths whose connections the feed cuts (network errors). */
  const cut = new Set<string>();
  const logLines: string[] = [];

  beforeAll(async () => {
    root = await tempDir('feed-');
    await cp(BUNDLED_FEED_ROOT, root.dir, { recursive: true });
    // A signature of another file: the archive does not match it. And a missing signature.
    await copyFile(join(root.dir, dumps[0]!.signature), join(root.dir, badSignature.signature));
    await rm(join(root.dir, noSignature.signature));
    cut.add(`/api/musicbrainz/${cutConnection.file}`);
    const handler = createSampleFeedHandler({ root: root.dir, tokens: [TOKEN] });
    server = createServer((req, res) => {
      if (cut.has((req.url ?? '').split('?')[0]!)) req.socket.destroy();
      else handler(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    feedRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/musicbrainz`;
    data = await tempDir();
    cliData = await tempDir();
  });
  afterAll(async () => {
    for (const db of databases) await db.close();
    server?.closeAllConnections();
    server?.close();
    await root.cleanup();
    await data.cleanup();
    await cliData.cleanup();
  });

  it('a sync with 404s, a bad and a missing signature and a cut connection', async () => {
    const logger = testLogger(logLines);
    const db = await open(data.dir);
    const ctx = await syncContextOn(db.store, {
      feedRoot,
      token: TOKEN,
      dataDir: data.dir,
      logger,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    });
    // The CLI's client: retries are logged with their URL (redacted).
    ctx.feed.client = new FeedClient({
      feedRoot,
      token: TOKEN,
      retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
      onRetry: (info) =>
        logger.warn(
          { event: 'retry', ...info },
          `retrying ${info.url} in ${info.delayMs} ms: ${info.reason}`,
        ),
    });
    const report = await syncOnce(ctx);
    record('sync report', report);
    expect(report.problems.map((p) => p.file).sort()).toEqual(
      [badSignature.file, noSignature.file, cutConnection.file].sort(),
    );
    expect(logLines.some((l) => l.includes('"event":"retry"') && l.includes('token=***'))).toBe(true);
    const errors = await db.rows("SELECT error FROM dumps WHERE status = 'FAILED'");
    record('dumps.error', errors);
    expect(JSON.stringify(errors)).toContain('token=***');
    await ctx.feed.client.close();
  });

  it('a sync with a wrong token (403) and with none (400)', async () => {
    for (const token of [WRONG, '']) {
      const wrongData = await tempDir();
      const logger = testLogger(logLines);
      const db = await open(wrongData.dir);
      const ctx = await syncContextOn(db.store, { feedRoot, token, dataDir: wrongData.dir, logger });
      const error = await syncOnce(ctx).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      record(`error of a sync with token ${token ? 'WRONG' : '(none)'}`, errorTexts(error));
      await ctx.feed.client.close();
      outputs.push(...(await databaseText(db)));
      for (const file of await filesUnder(wrongData.dir))
        outputs.push({ where: file.path, text: file.bytes.toString('latin1') });
      await wrongData.cleanup();
    }
  });

  it('GraphQL answers, file links (kept, fetched on demand, failing) and mirror downloads', async () => {
    const db = databases[0]!;
    await db.store.applyRetention(data.dir, { kind: 'packets', count: 2 }, new Date());
    const upstream = new FeedClient({
      feedRoot,
      token: TOKEN,
      retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    });
    const app = createApp({
      reads: db.reads,
      display: db.store.display,
      service: testService({ feedRoot: redactUrl(`${feedRoot}?token=${TOKEN}`) }),
      logger: testLogger(logLines),
      dataDir: data.dir,
      upstream,
    });
    const served = await serveApp(app);
    try {
      const queries = [
        '{ service { feedRoot demo deployment version } }',
        `{ packets(first: 50) { nodes { number dumps { entity status error attempts
            file { name url signatureUrl sha256 signature fingerprint fetchedAt } } } } }`,
        '{ latestPacket { number } }',
        '{ packet(number: -1) { number } }',
        '{ nonsense }',
      ];
      for (const query of queries) record(`GraphQL ${query.slice(0, 30)}`, await gql(app, query));
      const old = dumps[0]!;
      const recent = dumps.at(-4)!;
      cut.add(`/api/musicbrainz/${dumps[1]!.file}`);
      const paths = [
        `/files/${old.file}`, // fetched from the feed with the token
        `/files/${old.signature}`,
        `/files/${recent.file}`,
        `/files/${dumps[1]!.file}`, // the feed cuts the connection: 502
        `/files/${badSignature.file}`, // never stored: 404
        '/api/musicbrainz/replication-info',
        `/api/musicbrainz/${old.file}`,
        `/api/musicbrainz/${recent.file}`,
      ];
      const statuses: number[] = [];
      for (const path of paths) {
        const res = await rawRequest(served.origin, path);
        statuses.push(res.status);
        record(`GET ${path} head`, { status: res.status, headers: res.headers });
        record(`GET ${path} body`, res.body.toString('latin1'));
      }
      expect(statuses).toEqual([200, 200, 200, 502, 404, 200, 200, 200]);
      expect(
        readFileSync(join(BUNDLED_FEED_ROOT, old.file)).equals(readFileSync(join(root.dir, old.file))),
      ).toBe(true);
    } finally {
      await served.close();
      await upstream.close();
    }
  });

  it('the CLI: sync --once with failures (exit 1, naming file and signature) and with a wrong token (exit 3)', async () => {
    const plain = await startSampleFeed({ root: root.dir, tokens: [TOKEN] });
    const cliDb = await open(cliData.dir);
    try {
      const args = [
        'sync',
        '--once',
        '--db',
        cliDb.db,
        '--feed-url',
        plain.feedRoot,
        '--data-dir',
        cliData.dir,
        '--signing-key',
        TEST_PUBLIC_KEY_FILE,
      ];
      const run = await cli([...args, '--log-level', 'trace'], { LIVEFEED_TOKEN: TOKEN });
      record('CLI stdout', run.stdout);
      record('CLI stderr', run.stderr);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(
        `livefeed: packet ${badSignature.file.match(/json-dump-(\d+)/)![1]}: ${badSignature.file}: signature of ${badSignature.file} is INVALID`,
      );
      expect(run.stderr).toContain(`${noSignature.file}: signature of ${noSignature.file} is MISSING`);
      const wrong = await cli(args, { LIVEFEED_TOKEN: WRONG });
      record('CLI stdout (wrong token)', wrong.stdout);
      record('CLI stderr (wrong token)', wrong.stderr);
      expect(wrong.code).toBe(3);
      expect(wrong.stderr).toMatch(/access token is invalid.*token=\*\*\*/);
      expect(plain.requests.filter((r) => r.status === 200).length).toBeGreaterThan(0);
    } finally {
      await plain.close();
    }
  });

  it('no log line, error, report, answer, download, database byte or data file holds either token', async () => {
    for (const line of logLines) outputs.push({ where: 'log line', text: line });
    for (const dir of [data.dir, cliData.dir]) {
      const files = await filesUnder(dir);
      expect(files.some((f) => f.path.endsWith('livefeed.db'))).toBe(stores.kind === 'sqlite');
      for (const file of files) outputs.push({ where: file.path, text: file.bytes.toString('latin1') });
    }
    if (stores.kind === 'postgres') {
      const [synced] = await databaseText(databases[0]!);
      // The dump holds the rows: the failed dumps' errors, with the cut download's redacted URL.
      expect(synced!.text).toContain('token=***');
      outputs.push(synced!, ...(await databaseText(databases.at(-1)!)));
    }
    expect(outputs.length).toBeGreaterThan(100);
    const leaks = outputs.filter((o) => o.text.includes(TOKEN) || o.text.includes(WRONG)).map((o) => o.where);
    expect(leaks).toEqual([]);
    // The search works: the tokens were really used, and redaction marks are there to see.
    expect(outputs.some((o) => o.text.includes('token=***'))).toBe(true);
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CliProcess, startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';
import { readBundledManifest } from './support/manifest.js';
import { POSTGRES_TEST_PASSWORD } from './support/postgres.js';
import { describeStores, type TestDatabase } from './support/stores.js';

/**
 * `livefeed status`, `serve` and `start` as real processes on both stores (issue 17,
 * docs/POSTGRES_PORT.md step 8): on a database a real `sync --demo --once` wrote, `status` prints
 * the position and `serve` answers GraphQL and the HTTP routes from it; `start` syncs and serves a
 * new database in one process. The PostgreSQL password is never printed.
 */

const manifest = readBundledManifest();
/**
 * The newest complete packet after one demo pass: the bundled feed's last packet waits for a later
 * packet's JSON dumps (no evidence settles its missing ones), as on both stores.
 */
const LATEST = manifest.lastPacket - 1;
const REDACTED = /postgres:\/\/livefeed_test:\*\*\*@127\.0\.0\.1:\d+\//;

/** The origin of a serving process, from its `listening` log line. */
async function originOf(cli: CliProcess): Promise<string> {
  const listening = await cli.waitForEvent('listening');
  return `http://127.0.0.1:${listening.port as number}`;
}

async function graphql<T>(origin: string, query: string): Promise<T> {
  const response = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { data: T; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data;
}

/** `livefeed serve --demo` on port 0 over `db` (a file or a postgres:// URL), `more` flags added. */
function serveDemo(db: string, dataDir: string, more: string[] = []): CliProcess {
  return startCli(['serve', '--demo', '--port', '0', '--db', db, '--data-dir', dataDir, ...more]);
}

/** Stops `cli` with SIGTERM and expects a clean exit without the password in its output. */
async function stop(cli: CliProcess): Promise<void> {
  cli.child.kill('SIGTERM');
  const exit = await cli.exited;
  expect(exit.code, cli.stderr.join('\n')).toBe(0);
  expect([...cli.stderr, ...cli.stdout].join('\n')).not.toContain(POSTGRES_TEST_PASSWORD);
}

describeStores('livefeed status, serve and start as real processes', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;

  beforeAll(async () => {
    data = await tempDir(`lf-cli-serve-${stores.kind}-`);
    db = await stores.create(data.dir);
    const sync = startCli(['sync', '--demo', '--once', '--db', db.db, '--data-dir', data.dir]);
    const exit = await sync.exited;
    expect(exit.code, sync.stderr.join('\n')).toBe(0);
  }, 90_000);
  afterAll(async () => {
    await db?.close();
    await data?.cleanup();
  });

  it('status prints the position of the database, named without its password', async () => {
    const run = startCli(['status', '--demo', '--offline', '--db', db.db, '--data-dir', data.dir]);
    const exit = await run.exited;
    const screen = run.stdout.join('\n');
    expect(exit.code, run.stderr.join('\n')).toBe(0);
    expect(screen).toContain(`latest complete packet ${LATEST}`);
    expect(screen).toContain(
      `${manifest.packets.length} packets known, ${manifest.packets.length - 1} complete; highest ${manifest.lastPacket}`,
    );
    expect(screen).toMatch(/files {6}\d+ pending, 0 failed; 0 lines in quarantine/);
    expect(screen).toContain('(demo: the bundled sample feed)');
    expect(screen).toContain('  demo       the sample feed is a fixed snapshot');
    // No sync runs: no writer named (a killed one's row is no holder on PostgreSQL either).
    expect(screen).not.toMatch(/ {2}sync {7}pid/);
    if (stores.kind === 'postgres')
      expect(screen).toMatch(new RegExp(`^livefeed status: ${REDACTED.source}`));
    expect(screen + run.stderr.join('\n')).not.toContain(POSTGRES_TEST_PASSWORD);
  }, 60_000);

  it('serve answers GraphQL, /ready, /freshness, /metrics and the mirror from the database', async () => {
    const serve = serveDemo(db.db, data.dir, ['--log-level', 'info']);
    try {
      const origin = await originOf(serve);
      const answer = await graphql<{ latestPacket: { number: number }; service: { demo: boolean } }>(
        origin,
        '{ latestPacket { number } service { demo } }',
      );
      expect(answer).toEqual({ latestPacket: { number: LATEST }, service: { demo: true } });
      expect(await (await fetch(`${origin}/ready`)).text()).toBe('ready\n');
      const freshness = (await (await fetch(`${origin}/freshness?format=json`)).json()) as {
        localLatest: number;
      };
      expect(freshness.localLatest).toBe(LATEST);
      const metrics = await (await fetch(`${origin}/metrics`)).text();
      expect(metrics).toContain(`livefeed_local_latest_packet ${LATEST}\n`);
      // Per-server read lines only with --db-replica (every read goes to the one server here).
      expect(metrics).not.toContain('livefeed_db_server_');
      const info = await fetch(`${origin}/api/musicbrainz/replication-info`);
      expect(await info.json()).toEqual({
        last_packet: `replication-${LATEST}.tar.bz2`,
        history_from: manifest.firstPacket,
      });
      if (stores.kind === 'postgres') {
        expect(serve.events().find((e) => e.event === 'database')?.database).toMatch(REDACTED);
      }
    } finally {
      await stop(serve);
    }
  }, 60_000);

  it.runIf(stores.kind === 'postgres')(
    'serve without --demo over a database a demo sync wrote says it serves the demo',
    async () => {
      const serve = startCli([
        'serve',
        '--port',
        '0',
        '--db',
        db.db,
        '--data-dir',
        data.dir,
        '--log-level',
        'info',
      ]);
      try {
        const listening = await serve.waitForEvent('listening');
        expect(listening.demo).toBe(true);
        expect(listening.msg).toMatch(/\(demo data\)$/);
        const origin = `http://127.0.0.1:${listening.port as number}`;
        const answer = await graphql<{ service: { demo: boolean } }>(origin, '{ service { demo } }');
        expect(answer.service.demo).toBe(true);
      } finally {
        await stop(serve);
      }
    },
    60_000,
  );

  it.runIf(stores.kind === 'postgres')(
    'serve --db-replica sends the GraphQL reads to the replica, named without its password',
    async () => {
      // The database itself as its "replica": the reads go through the read router to it.
      const serve = serveDemo(db.db, data.dir, ['--db-replica', db.db]);
      try {
        const origin = await originOf(serve);
        const answer = await graphql<{ latestPacket: { number: number } }>(
          origin,
          '{ latestPacket { number } }',
        );
        expect(answer.latestPacket.number).toBe(LATEST);
        const opened = serve.events().find((e) => e.event === 'database')!;
        expect(opened.replicas).toEqual([expect.stringMatching(REDACTED)]);
        // /metrics counts the replica's reads, by its URL without the password.
        const metrics = await (await fetch(`${origin}/metrics`)).text();
        const reads = /livefeed_db_server_reads\{server="([^"]+)",role="replica"\} (\d+)/.exec(metrics);
        expect(reads?.[1]).toMatch(REDACTED);
        expect(Number(reads?.[2])).toBeGreaterThan(0);
        expect(metrics).toMatch(/livefeed_db_server_skipped\{server="[^"]+",role="replica"\} 0/);
        expect(metrics).not.toContain(POSTGRES_TEST_PASSWORD);
      } finally {
        await stop(serve);
      }
    },
    60_000,
  );

  it('start syncs a new database and serves it in one process', async () => {
    const fresh = await tempDir(`lf-cli-start-${stores.kind}-`);
    const target = await stores.create(fresh.dir);
    // No token: start runs the demo.
    const start = startCli(['start', '--port', '0', '--db', target.db, '--data-dir', fresh.dir]);
    try {
      const origin = await originOf(start);
      await start.waitForEvent('ready');
      const answer = await graphql<{ latestPacket: { number: number } }>(
        origin,
        '{ latestPacket { number } }',
      );
      expect(answer.latestPacket.number).toBe(LATEST);
      expect(await (await fetch(`${origin}/ready`)).text()).toBe('ready\n');
    } finally {
      await stop(start);
      await target.close();
      await fresh.cleanup();
    }
  }, 90_000);

  it('serve hears of the packets a sync in another process completes (packetSynced)', async () => {
    const fresh = await tempDir(`lf-cli-watch-${stores.kind}-`);
    const target = await stores.create(fresh.dir);
    const sync = (more: string[]) =>
      startCli(['sync', '--demo', '--once', '--db', target.db, '--data-dir', fresh.dir, ...more]);
    let serve: CliProcess | undefined;
    let stream: Response | undefined;
    try {
      const first = await sync(['--to', String(manifest.packets[2]!.number)]).exited;
      expect(first.code).toBe(0);
      serve = serveDemo(target.db, fresh.dir);
      const origin = await originOf(serve);
      const before = await graphql<{ latestPacket: { number: number } }>(
        origin,
        '{ latestPacket { number } }',
      );
      const subscription = encodeURIComponent('subscription { packetSynced { number } }');
      stream = await fetch(`${origin}/graphql?query=${subscription}`, {
        headers: { accept: 'text/event-stream' },
      });
      expect(stream.status).toBe(200);
      // The subscription is live once its first (empty) chunk arrives; only then does the sync write.
      const reader = stream.body!.getReader();
      await reader.read();
      const rest = sync([]);
      const heard: number[] = [];
      let text = '';
      while (!heard.includes(LATEST)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
        heard.splice(0, heard.length, ...[...text.matchAll(/"number":(\d+)/g)].map((m) => Number(m[1])));
      }
      expect((await rest.exited).code).toBe(0);
      // Every packet completed after the watch began, once each, in order; none of those before.
      expect(heard.at(-1)).toBe(LATEST);
      expect(heard[0]).toBeGreaterThan(before.latestPacket.number);
      expect(heard).toEqual([...heard].sort((a, b) => a - b));
      expect(new Set(heard).size).toBe(heard.length);
    } finally {
      await stream?.body?.cancel().catch(() => {});
      if (serve) await stop(serve);
      await target.close();
      await fresh.cleanup();
    }
  }, 120_000);
});

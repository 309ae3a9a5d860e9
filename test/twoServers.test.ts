import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redactDatabaseUrl } from '../src/config/databaseUrl.js';
import { openPostgresStore, type PostgresStore } from '../src/db/postgres/client.js';
import { pgRows } from '../src/db/postgres/sql.js';
import { type CliProcess, startCli } from './support/cli.js';
import { syncDemoReference } from './support/demoReference.js';
import { tempDir } from './support/harness.js';
import { readBundledManifest } from './support/manifest.js';
import {
  describePostgres,
  POSTGRES_TEST_PASSWORD,
  type PostgresCluster,
  startPostgres,
} from './support/postgres.js';
import { plain, snapshotStore, type TestDatabase } from './support/stores.js';

/**
 * Issue 17, docs/POSTGRES_PORT.md step 10: one PostgreSQL database, one `livefeed sync` and two
 * `livefeed serve` processes, all real. The servers start on the empty database (both migrate it
 * at once, under the migration lock) and answer identically while the sync writes and after it
 * finished; a sync killed with kill -9 and run again leaves the rows of a clean in-process sync.
 */

const manifest = readBundledManifest();
const first = manifest.packets[0]!;
const last = manifest.packets.at(-1)!;
const mbidsOf = (packet: typeof first) => Object.values(packet.jsonDumps).flatMap((dump) => dump.mbids);
const MBIDS = [...mbidsOf(first).slice(0, 2), ...mbidsOf(last).slice(0, 1)];

/** entity, resolve, changeFeed, packets and latestPacket in one request. */
const QUERY = `{
  latestPacket { number timestamp syncedAt }
  packets(first: 30) {
    totalCount
    nodes { number timestamp syncedAt replicationStatus dumps { entity status changeCount } }
  }
  changeFeed(first: 50) {
    totalCount
    edges {
      cursor
      node {
        __typename
        ... on EntityChange { mbid packet position name }
        ... on EntityRemoval { mbid packet kind }
      }
    }
  }
  entity(mbid: "${MBIDS[0]}") { type latest { packet name } history(first: 5) { totalCount nodes { packet position name } } }
  resolve(mbids: ${JSON.stringify(MBIDS)}) { mbid status path }
}`;

/** What a server answers; `/freshness` without its clock-dependent fields. */
async function answerOf(origin: string): Promise<unknown> {
  const response = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: QUERY }),
  });
  const graphql = (await response.json()) as { data?: unknown; errors?: unknown };
  expect(graphql.errors).toBeUndefined();
  const freshness = (await (await fetch(`${origin}/freshness?format=json`)).json()) as Record<
    string,
    unknown
  >;
  const { ageSeconds: _age, lagSeconds: _lag, message: _message, ...position } = freshness;
  const ready = await (await fetch(`${origin}/ready`)).text();
  const replicationInfo = await (await fetch(`${origin}/api/musicbrainz/replication-info`)).text();
  return { graphql: graphql.data, position, ready, replicationInfo };
}

function serve(url: string, dataDir: string): CliProcess {
  return startCli(['serve', '--port', '0', '--db', url, '--data-dir', dataDir, '--log-level', 'info']);
}

async function originOf(cli: CliProcess): Promise<string> {
  const listening = await cli.waitForEvent('listening');
  return `http://127.0.0.1:${listening.port as number}`;
}

describePostgres('two livefeed serve processes over one PostgreSQL database, one sync writing', () => {
  let cluster: PostgresCluster | undefined;
  let work: Awaited<ReturnType<typeof tempDir>>;
  let reference: Record<string, unknown>;
  let url: string;
  let store: PostgresStore;
  const servers: CliProcess[] = [];
  let origins: string[] = [];

  beforeAll(async () => {
    work = await tempDir('lf-two-servers-');
    const demo = await syncDemoReference(join(work.dir, 'reference'));
    try {
      reference = await snapshotStore(demo);
    } finally {
      await demo.close();
    }
    cluster = await startPostgres();
    ({ url } = await cluster.createDatabase('two_servers'));
    // Two servers on machines of their own: each its own data folder, no kept archives shared.
    servers.push(serve(url, join(work.dir, 'a')), serve(url, join(work.dir, 'b')));
    origins = await Promise.all(servers.map(originOf));
    store = await openPostgresStore({ connectionString: url, display: redactDatabaseUrl(url) });
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.exited));
    await store?.close();
    await cluster?.stop();
    await work?.cleanup();
  });

  /** A `sync --demo --once` into the database, its data folder the syncing node's. */
  const sync = () =>
    startCli([
      'sync',
      '--demo',
      '--once',
      '--db',
      url,
      '--data-dir',
      join(work.dir, 'sync'),
      '--log-level',
      'info',
    ]);

  /**
   * Asks server A, then B, then A again while `running` holds; when A answered the same twice, B,
   * asked in between, must have answered that too (what a sync commits only ever grows the answer).
   * @returns how many rounds were compared, and how many saw the database change.
   */
  async function compareWhile(running: () => boolean): Promise<{ compared: number; changed: number }> {
    let compared = 0;
    let changed = 0;
    while (running()) {
      const before = await answerOf(origins[0]!);
      const other = await answerOf(origins[1]!);
      const after = await answerOf(origins[0]!);
      if (JSON.stringify(before) === JSON.stringify(after)) {
        expect(other).toEqual(before);
        compared++;
      } else changed++;
    }
    return { compared, changed };
  }

  it('answer identically while a sync writes, and after; a sync killed with kill -9 then run again leaves a clean run’s rows', async () => {
    // First run: killed with kill -9 once a few JSON dumps are stored, the servers answering throughout.
    const killed = sync();
    let killedDone = false;
    void killed.exited.then(() => {
      killedDone = true;
    });
    const during = compareWhile(() => !killedDone);
    await killed
      .waitUntil((events) => events.filter((e) => e.event === 'dump-stored').length >= 5, '5 dumps stored')
      .catch(() => undefined);
    killed.child.kill('SIGKILL');
    expect((await killed.exited).signal).toBe('SIGKILL');
    const whileKilled = await during;
    expect(whileKilled.compared).toBeGreaterThan(0);
    // Its advisory lock went with its session: the holder row names no writer now.
    const status = startCli(['status', '--offline', '--db', url]);
    expect((await status.exited).code).toBe(0);
    expect(status.stdout.join('\n')).not.toMatch(/ {2}sync {7}pid/);

    // Run again to the end, compared throughout.
    const again = sync();
    let done = false;
    void again.exited.then(() => {
      done = true;
    });
    const rounds = await compareWhile(() => !done);
    const exit = await again.exited;
    expect(exit.code, again.stderr.join('\n')).toBe(0);
    expect(rounds.compared).toBeGreaterThan(0);
    expect(whileKilled.changed + rounds.changed).toBeGreaterThan(0);

    // After: the same answers, byte for byte, and the rows of a clean sync.
    const [a, b] = await Promise.all(origins.map(answerOf));
    expect(b).toEqual(a);
    expect((a as { graphql: { latestPacket: { number: number } } }).graphql.latestPacket.number).toBe(
      last.number - 1,
    );
    const db: Pick<TestDatabase, 'rows'> = {
      rows: async (sql, ...args) =>
        (await pgRows<Record<string, unknown>>(store.pool, sql, args)).map(
          (row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, plain(v)])) as never,
        ),
    };
    expect(await snapshotStore(db)).toEqual(reference);
    for (const server of servers) {
      expect(server.stderr.join('\n')).not.toContain(POSTGRES_TEST_PASSWORD);
    }
  }, 240_000);
});

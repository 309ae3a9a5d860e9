import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../src/db/postgres/client.js';
import { acquirePostgresWriterLock } from '../src/sync/postgres/lock.js';
import { writeJsonDump } from './support/archives.js';
import { startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';
import {
  describePostgres,
  POSTGRES_TEST_PASSWORD,
  type PostgresCluster,
  startPostgres,
} from './support/postgres.js';

/** Runs the real `livefeed` process to its end. */
async function runCli(args: string[], env: Record<string, string> = {}) {
  const cli = startCli(args, env);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout.join('\n'), stderr: cli.stderr.join('\n') };
}

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const lines = [
  ...Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: id(i + 1), name: `Label ${i}` })),
  'not json',
];

describePostgres('livefeed import into PostgreSQL, as a real process', () => {
  let cluster: PostgresCluster | undefined;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let archive: string;
  let url: string;
  let bare: string;
  let passwordFile: string;
  let store: PostgresStore;
  const count = async (packet: number) =>
    (await store.pool.query<{ n: number }>('SELECT count(*) AS n FROM changes WHERE packet = $1', [packet]))
      .rows[0]!.n;

  beforeAll(async () => {
    dir = await tempDir('pg-cli-');
    archive = (await writeJsonDump(dir.dir, { packet: 500, entity: 'label', lines })).path;
    cluster = await startPostgres();
    ({ url, withoutPassword: bare } = await cluster.createDatabase('cli_test'));
    passwordFile = join(dir.dir, 'db-password');
    await writeFile(passwordFile, `${POSTGRES_TEST_PASSWORD}\n`, { mode: 0o600 });
    store = await openPostgresStore({ connectionString: url, display: 'cli_test' });
  });
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
    await dir?.cleanup();
  });

  it('imports with the password from LIVEFEED_DB_PASSWORD_FILE, never showing it', async () => {
    const { code, stdout, stderr } = await runCli(
      ['import', archive, '--packet', '500', '--log-format', 'json'],
      {
        LIVEFEED_DB: bare,
        LIVEFEED_DB_PASSWORD_FILE: passwordFile,
      },
    );
    expect(stderr).not.toContain(POSTGRES_TEST_PASSWORD);
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/as packet 500 label: 3000 changes, 1 quarantined, 3001 lines/);
    expect(stderr).toContain(`"database":"${bare}"`);
    expect(await count(500)).toBe(3000);
    // Analyzed after the import: the common-words threshold reads the index size from this estimate.
    const { rows } = await store.pool.query<{ n: number }>(
      "SELECT reltuples AS n FROM pg_class WHERE oid = 'search_index'::regclass",
    );
    expect(Number(rows[0]!.n)).toBe(3000);
  });

  it('imports with the password in the --db URL; the database holds no trace of it', async () => {
    const { code, stdout, stderr } = await runCli([
      'import',
      archive,
      '--packet',
      '500',
      '--db',
      url,
      '--log-format',
      'json',
    ]);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('3000 changes');
    expect(stderr).not.toContain(POSTGRES_TEST_PASSWORD);
    expect(stderr).toContain(`"database":"${bare.replace('livefeed_test@', 'livefeed_test:***@')}"`);
    expect(await count(500)).toBe(3000);
    const tables = await store.pool.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    for (const { name } of tables.rows) {
      const found = await store.pool.query(`SELECT 1 FROM "${name}" t WHERE t::text LIKE $1`, [
        `%${POSTGRES_TEST_PASSWORD}%`,
      ]);
      expect(found.rows, name).toEqual([]);
    }
  });

  it('exits 5 naming the holder while another writer holds the lock', async () => {
    const lock = await acquirePostgresWriterLock(store, { pid: 999, host: 'other-host' });
    try {
      const { code, stderr } = await runCli(['import', archive, '--packet', '500', '--db', url]);
      expect(code).toBe(5);
      expect(stderr).toMatch(
        /another sync is writing postgres:\/\/livefeed_test:\*\*\*@127\.0\.0\.1:\d+\/cli_test: pid 999 on other-host/,
      );
      expect(stderr).not.toContain(POSTGRES_TEST_PASSWORD);
    } finally {
      await lock.release();
    }
  });

  it('leaves nothing of a dump of another packet than --packet, and says which (exit 2)', async () => {
    const { code, stderr } = await runCli(['import', archive, '--packet', '501', '--db', url]);
    expect(code).toBe(2);
    expect(stderr).toContain(`--packet 501: ${archive} is the JSON dump of packet 500`);
    expect(await count(501)).toBe(0);
  });

  it('rolls back an import killed with SIGKILL: nothing of it stays, and the lock is free at once', async () => {
    const big = Array.from({ length: 40_000 }, (_, i) =>
      JSON.stringify({ id: id(i + 1), pad: 'p'.repeat(1500), i }),
    );
    const path = (await writeJsonDump(join(dir.dir, 'big'), { packet: 502, entity: 'label', lines: big }))
      .path;
    const cli = startCli(['import', path, '--packet', '502', '--db', url]);
    // Killed while its COPY runs (seen from the server), in the middle of the dump's transaction.
    for (;;) {
      const copying = await store.pool.query(
        "SELECT 1 FROM pg_stat_activity WHERE application_name = 'livefeed import' AND query LIKE 'COPY changes%'",
      );
      if (copying.rows.length > 0) break;
      if (cli.child.exitCode !== null) throw new Error(`import ended first: ${cli.stderr.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    cli.child.kill('SIGKILL');
    await cli.exited;
    expect(await count(502)).toBe(0);
    const again = await runCli(['import', path, '--packet', '502', '--db', url]);
    expect(again.code, again.stderr).toBe(0);
    expect(await count(502)).toBe(40_000);
  });

  it('refuses a password given twice, a password file for SQLite and a URL without host (exit 2), showing no password', async () => {
    const twice = await runCli(['import', archive, '--packet', '500'], {
      LIVEFEED_DB: url,
      LIVEFEED_DB_PASSWORD_FILE: passwordFile,
    });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/has a password and LIVEFEED_DB_PASSWORD_FILE gives one too/);
    const sqlite = await runCli(['import', archive, '--packet', '500', '--db', join(dir.dir, 'x.db')], {
      LIVEFEED_DB_PASSWORD_FILE: passwordFile,
    });
    expect(sqlite.code).toBe(2);
    expect(sqlite.stderr).toMatch(/LIVEFEED_DB_PASSWORD_FILE is for a postgres:\/\/ --db/);
    const broken = await runCli([
      'import',
      archive,
      '--packet',
      '500',
      '--db',
      `postgres://u:${POSTGRES_TEST_PASSWORD}@/db`,
    ]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/--db postgres:\/\/\(not a URL\): not a valid URL/);
    const hostless = await runCli(['import', archive, '--packet', '500', '--db', 'postgres:///db']);
    expect(hostless.code).toBe(2);
    expect(hostless.stderr).toMatch(/--db postgres:\/\/\/db: names no host/);
    for (const run of [twice, sqlite, broken]) expect(run.stderr).not.toContain(POSTGRES_TEST_PASSWORD);
  });

  it('names the database but not the password when the login is refused (exit 2: the --db to fix)', async () => {
    const wrong = bare.replace('livefeed_test@', 'livefeed_test:wrong-secret-42@');
    const { code, stderr } = await runCli(['import', archive, '--packet', '500', '--db', wrong]);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /cannot open database postgres:\/\/livefeed_test:\*\*\*@127\.0\.0\.1:\d+\/cli_test: password authentication failed .*check --db or LIVEFEED_DB, and LIVEFEED_DB_PASSWORD_FILE; README, PostgreSQL/,
    );
    expect(stderr).not.toContain('wrong-secret-42');
  });

  it('says a password is missing when the server asks for one and none was given (exit 2, at once)', async () => {
    // `bare` has no password, and no LIVEFEED_DB_PASSWORD_FILE is set: the server's SCRAM login
    // needs one. The driver leaves its socket open, which the server closes only after a minute.
    const run = await runCli(['status', '--offline', '--db', bare]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(
      /cannot open database postgres:\/\/livefeed_test@127\.0\.0\.1:\d+\/cli_test: the server asks for a password and none was given: put it in a file named by LIVEFEED_DB_PASSWORD_FILE, or in the URL \(README, PostgreSQL\)/,
    );
  }, 30_000);

  it('status on a database without livefeed tables says nothing is synced (exit 1) and creates none', async () => {
    const { url: empty } = await cluster!.createDatabase('cli_empty');
    const run = await runCli(['status', '--offline', '--db', empty]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /^livefeed status: no livefeed tables in postgres:\/\/livefeed_test:\*\*\*@127\.0\.0\.1:\d+\/cli_empty: nothing synced yet/,
    );
    const tables = await cluster!.psql(
      'cli_empty',
      "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
    );
    expect(tables.trim()).toBe('0');
    expect(await cluster!.psql('cli_empty', "SELECT to_regnamespace('drizzle') IS NULL")).toMatch(/^t/);
  });

  it('says so when the database does not exist (exit 2), and a server that is down is no configuration error (exit 4)', async () => {
    const missing = url.replace(/\/cli_test$/, '/cli_tset');
    const typo = await runCli(['status', '--offline', '--db', missing]);
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toMatch(
      /cannot open database postgres:\/\/livefeed_test:\*\*\*@127\.0\.0\.1:\d+\/cli_tset: database "cli_tset" does not exist/,
    );
    // No server on this port: livefeed cannot tell a wrong port from a server that is down.
    const down = await runCli(['status', '--offline', '--db', url.replace(/:\d+\//, ':1/')]);
    expect(down.code, down.stderr).toBe(4);
    expect(down.stderr).toMatch(
      /cannot open database .*127\.0\.0\.1:1\/cli_test: .*ECONNREFUSED.*\(is PostgreSQL running and reachable there\? README, PostgreSQL\)/,
    );
    for (const run of [typo, down]) expect(run.stderr).not.toContain(POSTGRES_TEST_PASSWORD);
  });
});

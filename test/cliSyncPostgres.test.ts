import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore } from '../src/db/postgres/client.js';
import { acquirePostgresWriterLock } from '../src/sync/postgres/lock.js';
import { startCli } from './support/cli.js';
import { tempDir } from './support/harness.js';
import {
  describePostgres,
  POSTGRES_TEST_PASSWORD,
  type PostgresCluster,
  startPostgres,
} from './support/postgres.js';

/**
 * The demo syncs into PostgreSQL, replication packets included, with the password from LIVEFEED_DB_PASSWORD_FILE; a second writer is refused while
 * one holds the lock (exit 5). test/cliSyncStores.test.ts compares the rows with SQLite's.
 */

async function runCli(args: string[], env: Record<string, string> = {}) {
  const cli = startCli(args, env);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout.join('\n'), stderr: cli.stderr.join('\n') };
}

describePostgres('livefeed sync into PostgreSQL, as a real process', () => {
  let cluster: PostgresCluster | undefined;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let passwordFile: string;

  beforeAll(async () => {
    dir = await tempDir('pg-cli-sync-');
    cluster = await startPostgres();
    passwordFile = join(dir.dir, 'db-password');
    await writeFile(passwordFile, `${POSTGRES_TEST_PASSWORD}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await cluster?.stop();
    await dir?.cleanup();
  });

  it('syncs the demo feed with the password from LIVEFEED_DB_PASSWORD_FILE and marks the database as the demo', async () => {
    const { withoutPassword } = await cluster!.createDatabase('sync_demo');
    const data = await tempDir('pg-cli-demo-');
    try {
      const run = await runCli(
        ['sync', '--demo', '--once', '--db', withoutPassword, '--data-dir', data.dir],
        { LIVEFEED_DB_PASSWORD_FILE: passwordFile },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toContain(POSTGRES_TEST_PASSWORD);
      const sql = (query: string) => cluster!.psql('sync_demo', query).then((out) => out.trim());
      expect(await sql("SELECT value FROM meta WHERE key = 'demo'")).toBe('true');
      expect(Number(await sql('SELECT count(*) FROM changes'))).toBeGreaterThan(0);
      expect(Number(await sql('SELECT count(*) FROM row_changes'))).toBeGreaterThan(0);
      expect(await sql("SELECT count(*) FROM replication_packets WHERE status <> 'SYNCED'")).toBe('0');
      // Nothing failed; only the newest packet's dumps that upstream did not publish wait (PENDING):
      // no later packet's dump is evidence for them yet (README, How a sync works).
      expect(await sql("SELECT count(*) FROM dumps WHERE status = 'FAILED'")).toBe('0');
      expect(
        await sql(
          "SELECT count(*) FROM dumps WHERE status = 'PENDING' AND packet < (SELECT max(number) FROM packets)",
        ),
      ).toBe('0');
      // Every stored dump holds exactly the changes it counted; the latest packet is the newest complete one.
      expect(
        await sql(
          "SELECT count(*) FROM dumps d WHERE d.status = 'SYNCED' AND d.change_count <> (SELECT count(*) FROM changes c WHERE c.packet = d.packet AND c.entity = d.entity)",
        ),
      ).toBe('0');
      const mark = JSON.parse(await sql("SELECT value FROM meta WHERE key = 'latest_packet'"));
      const newestComplete = Number(await sql('SELECT max(number) FROM packets WHERE synced_at IS NOT NULL'));
      expect(mark.number).toBe(newestComplete);
      expect(
        await sql(`SELECT count(*) FROM packets WHERE synced_at IS NULL AND number < ${newestComplete}`),
      ).toBe('0');
    } finally {
      await data.cleanup();
    }
  }, 60_000);

  it('exits 5 naming the holder while another writer holds the lock', async () => {
    const { url } = await cluster!.createDatabase('sync_locked');
    const store = await openPostgresStore({ connectionString: url, display: 'sync_locked' });
    const lock = await acquirePostgresWriterLock(store, { pid: 999, host: 'other-host' });
    try {
      const run = await runCli(['sync', '--demo', '--once', '--db', url, '--data-dir', dir.dir]);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toMatch(/pid 999 on other-host/);
      expect(run.stderr).not.toContain(POSTGRES_TEST_PASSWORD);
    } finally {
      await lock.release();
      await store.close();
    }
  }, 60_000);

  it('follows until SIGTERM, then exits 0 having released the lock', async () => {
    const { url } = await cluster!.createDatabase('sync_follow');
    const data = await tempDir('pg-cli-follow-');
    try {
      const run = startCli([
        'sync',
        '--demo',
        '--poll-interval',
        '1',
        '--db',
        url,
        '--data-dir',
        data.dir,
        '--log-format',
        'json',
        '--log-level',
        'info',
      ]);
      await run.waitForEvent('sync-pass');
      run.child.kill('SIGTERM');
      const exit = await run.exited;
      expect(exit.code, run.stderr.join('\n')).toBe(0);
      const sql = (query: string) => cluster!.psql('sync_follow', query).then((out) => out.trim());
      expect(await sql('SELECT count(*) FROM sync_lock')).toBe('0');
      expect(Number(await sql('SELECT count(*) FROM packets WHERE synced_at IS NOT NULL'))).toBeGreaterThan(
        0,
      );
      // The advisory lock is free: another writer takes it at once.
      const store = await openPostgresStore({ connectionString: url, display: 'sync_follow' });
      try {
        await (await acquirePostgresWriterLock(store)).release();
      } finally {
        await store.close();
      }
    } finally {
      await data.cleanup();
    }
  }, 60_000);

  it('a following sync whose connection breaks takes the writer lock again and goes on (README, Exit codes)', async () => {
    const { url } = await cluster!.createDatabase('sync_lock_lost');
    const data = await tempDir('pg-cli-lost-');
    try {
      const run = startCli(['sync', '--demo', '--poll-interval', '1', '--db', url, '--data-dir', data.dir]);
      await run.waitForEvent('sync-pass');
      // The backend holding the advisory lock ends, as at a failover; the others live on.
      const ended = await cluster!.psql(
        'sync_lock_lost',
        "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = 'advisory' AND granted",
      );
      expect(ended.trim()).toBe('1');
      const lost = await run.waitForEvent('writer-reconnect');
      expect(lost).toMatchObject({ attempt: 1, delaySeconds: 1 });
      await run.waitForEvent('writer-reconnected');
      const passes = run.events().filter((e) => e.event === 'sync-pass').length;
      await run.waitUntil(
        (events) => events.filter((e) => e.event === 'sync-pass').length > passes,
        'another pass',
      );
      // The lock is held again, by one session.
      expect(
        await cluster!.psql(
          'sync_lock_lost',
          "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted",
        ),
      ).toBe('1\n');
      run.child.kill('SIGTERM');
      const exit = await run.exited;
      expect(exit.code, run.stderr.join('\n')).toBe(0);
      expect(run.stderr.join('\n')).not.toContain(POSTGRES_TEST_PASSWORD);
    } finally {
      await data.cleanup();
    }
  }, 60_000);

  it('waits for a server that stops and starts again, then syncs on', async () => {
    const { url } = await cluster!.createDatabase('sync_restart');
    const data = await tempDir('pg-cli-restart-');
    try {
      const run = startCli(['sync', '--demo', '--poll-interval', '1', '--db', url, '--data-dir', data.dir]);
      await run.waitForEvent('sync-pass');
      await cluster!.interrupt(async () => {
        // Down long enough that opening it again fails at least once (connection refused).
        await run.waitUntil(
          (events) => events.some((e) => e.event === 'writer-reconnect' && Number(e.attempt) >= 2),
          'a second attempt',
        );
      });
      await run.waitForEvent('writer-reconnected');
      const passes = run.events().filter((e) => e.event === 'sync-pass').length;
      await run.waitUntil(
        (events) => events.filter((e) => e.event === 'sync-pass').length > passes,
        'another pass',
      );
      run.child.kill('SIGTERM');
      expect((await run.exited).code, run.stderr.join('\n')).toBe(0);
      const synced = await cluster!.psql(
        'sync_restart',
        'SELECT count(*) FROM packets WHERE synced_at IS NOT NULL',
      );
      expect(Number(synced)).toBeGreaterThan(0);
    } finally {
      await data.cleanup();
    }
  }, 90_000);
});

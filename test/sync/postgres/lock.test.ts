import { hostname } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { WRITER_LOCK_KEY } from '../../../src/db/postgres/writerSession.js';
import { LockHeldError } from '../../../src/sync/errors.js';
import { acquirePostgresWriterLock, endStaleWriterSession } from '../../../src/sync/postgres/lock.js';
import { testLogger } from '../../support/harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

describePostgres('the PostgreSQL writer lock (an advisory lock)', () => {
  let cluster: PostgresCluster | undefined;
  let url: string;
  const stores: PostgresStore[] = [];
  /** A store of its own: its own pool, as another process would have. */
  const open = async () => {
    const store = await openPostgresStore({
      connectionString: url,
      display: 'postgres://livefeed_test:***@127.0.0.1/lock_test',
    });
    stores.push(store);
    return store;
  };
  const holderRow = async (store: PostgresStore) =>
    (await store.pool.query('SELECT pid, host FROM sync_lock')).rows;

  beforeAll(async () => {
    cluster = await startPostgres();
    url = (await cluster.createDatabase('lock_test')).url;
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await cluster?.stop();
  });

  it('is taken, names its holder, and is released', async () => {
    const store = await open();
    const lock = await acquirePostgresWriterLock(store, { pid: 4242, host: 'writer-a' });
    expect(lock.holder).toMatchObject({ pid: 4242, host: 'writer-a' });
    expect(await holderRow(store)).toEqual([{ pid: 4242, host: 'writer-a' }]);
    const held = await store.pool.query<{ n: number }>(
      "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted",
    );
    expect(held.rows[0]!.n).toBe(1);
    await lock.release();
    await lock.release();
    expect(await holderRow(store)).toEqual([]);
    const free = await store.pool.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [
      WRITER_LOCK_KEY.toString(),
    ]);
    expect(free.rows[0]!.ok).toBe(true);
    await store.pool.query('SELECT pg_advisory_unlock_all()');
  });

  it('refuses a second writer with the error the SQLite lock gives, naming the holder and not the password', async () => {
    const first = await open();
    const second = await open();
    const lock = await acquirePostgresWriterLock(first);
    try {
      const error = await acquirePostgresWriterLock(second).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockHeldError);
      const message = (error as Error).message;
      expect(message).toContain(
        `another sync is writing postgres://livefeed_test:***@127.0.0.1/lock_test: pid ${process.pid} on ${hostname()}`,
      );
      expect(message).toContain('--wait');
      expect(message).not.toContain('pw-4b1c');
    } finally {
      await lock.release();
    }
    const next = await acquirePostgresWriterLock(second);
    await next.release();
  });

  it('waits for the holder with wait, then takes the lock', async () => {
    const first = await open();
    const second = await open();
    const lock = await acquirePostgresWriterLock(first, { pid: 1, host: 'first' });
    const lines: string[] = [];
    const waiting = acquirePostgresWriterLock(second, {
      wait: true,
      pollMs: 20,
      pid: 2,
      host: 'second',
      logger: testLogger(lines),
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lines.some((line) => line.includes('"event":"lock-wait"'))).toBe(true);
    await lock.release();
    const taken = await waiting;
    expect(await holderRow(second)).toEqual([{ pid: 2, host: 'second' }]);
    await taken.release();
  });

  it('is lost when its connection ends (PostgreSQL frees it at once: no stale holder to wait out)', async () => {
    const first = await open();
    const second = await open();
    const lock = await acquirePostgresWriterLock(first, { heartbeatMs: 20, pid: 1, host: 'first' });
    await second.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()",
    );
    await new Promise<void>((resolve) => {
      if (lock.lost.aborted) resolve();
      else lock.lost.addEventListener('abort', () => resolve());
    });
    expect(String(lock.lost.reason)).toMatch(/writer lock was lost/);
    const next = await acquirePostgresWriterLock(second, { pid: 2, host: 'second' });
    expect(await holderRow(second)).toEqual([{ pid: 2, host: 'second' }]);
    await next.release();
    await lock.release();
  });

  it("ends this writer's own earlier session that still holds the lock, and only that one", async () => {
    // A break only the client saw: the server keeps the old session and its lock (here: never released).
    const old = await open();
    const stale = await acquirePostgresWriterLock(old);
    const again = await open();
    expect(await acquirePostgresWriterLock(again).catch((e: unknown) => e)).toBeInstanceOf(LockHeldError);
    // Another session's pid that holds no writer lock is left alone.
    const other = (await again.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    expect(await endStaleWriterSession(again, other)).toBe(false);
    expect(await endStaleWriterSession(again, stale.backendPid)).toBe(true);
    const lock = await acquirePostgresWriterLock(again, { wait: true, pollMs: 50 });
    expect(lock.backendPid).not.toBe(stale.backendPid);
    await lock.release();
    await stale.release();
  });
});

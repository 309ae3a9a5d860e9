import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresConnection, postgresPool } from '../../../src/db/postgres/client.js';
import {
  clientCheckOnConnect,
  openPostgresWriterStore,
  WRITER_CLIENT_CHECK_MS,
} from '../../../src/db/postgres/writerSession.js';
import { testLogger } from '../../support/harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

/**
 * The writer's connections check for a vanished client (`client_connection_check_interval`,
 * db/postgres/writerSession.ts; docs/POSTGRES_PORT.md step 1): a killed writer's running statement
 * is ended by the server instead of holding its locks until it finishes.
 */

const show = async (on: pg.Pool | pg.PoolClient) =>
  (await on.query<{ client_connection_check_interval: string }>('SHOW client_connection_check_interval'))
    .rows[0]!.client_connection_check_interval;

describePostgres('the PostgreSQL writer session', () => {
  let cluster: PostgresCluster | undefined;
  let connection: PostgresConnection;

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('writer_session');
    connection = { connectionString: url, display: 'writer_session' };
  }, 60_000);
  afterAll(() => cluster?.stop());

  it("sets client_connection_check_interval on every writer connection, not on a server's", async () => {
    expect(WRITER_CLIENT_CHECK_MS).toBe(5_000);
    const writer = await openPostgresWriterStore(connection, 'sync', testLogger());
    const served = await openPostgresStore(connection, { applicationName: 'livefeed serve' });
    try {
      // Two connections at once: the lock's and the writing one are both new connections of the pool.
      const [a, b] = [await writer.pool.connect(), await writer.pool.connect()];
      try {
        const pids = await Promise.all(
          [a, b].map(async (c) => (await c.query('SELECT pg_backend_pid() AS p')).rows[0].p),
        );
        expect(new Set(pids).size).toBe(2);
        expect([await show(a), await show(b)]).toEqual(['5s', '5s']);
        const name = await a.query<{ n: string }>("SELECT current_setting('application_name') AS n");
        expect(name.rows[0]!.n).toBe('livefeed sync');
      } finally {
        a.release();
        b.release();
      }
      expect(await show(served.pool)).toBe('0');
    } finally {
      await writer.close();
      await served.close();
    }
  });

  it("a writer whose client vanished mid-statement is ended by the server; a server's is left running", async () => {
    const writer = await openPostgresWriterStore(connection, 'sync', testLogger());
    const served = await openPostgresStore(connection, { applicationName: 'livefeed serve' });
    const watcher = await openPostgresStore(connection);
    try {
      const [mine, control] = [await vanishing(writer.pool), await vanishing(served.pool)];
      for (const session of [mine, control]) {
        while (!(await isSleeping(watcher.pool, session.pid))) await sleep(50);
      }
      // What kill -9 does to a process's sockets: closed on the client's side, no message sent.
      for (const session of [mine, control]) session.vanish();
      expect(await mine.running).toBeInstanceOf(Error);
      expect(await control.running).toBeInstanceOf(Error);
      // Both statements had ten minutes to run; the writer's ends at the server's next check.
      while (await isAlive(watcher.pool, mine.pid)) await sleep(100);
      expect(await isSleeping(watcher.pool, control.pid)).toBe(true);
      await watcher.pool.query('SELECT pg_terminate_backend($1)', [control.pid]);
    } finally {
      await Promise.all([writer.close(), served.close(), watcher.close()]);
    }
  }, 60_000);

  it('keeps the connection, telling why, when the server refuses the value', async () => {
    // Out of range: refused with the SQLSTATE of a server whose operating system cannot check.
    const refused: Error[] = [];
    const pool = postgresPool(connection, { onConnect: clientCheckOnConnect(-1, (e) => refused.push(e)) });
    try {
      expect(await show(pool)).toBe('0');
      expect(refused.map((e) => e.message)).toEqual([
        expect.stringContaining('client_connection_check_interval'),
      ]);
    } finally {
      await pool.end();
    }
  });
});

/**
 * A connection of `pool` that starts a ten-minute statement; `vanish()` closes its socket as a
 * killed process would (the pool forgets the connection).
 */
async function vanishing(pool: pg.Pool) {
  const client = await pool.connect();
  const errors: Error[] = [];
  client.on('error', (error) => errors.push(error));
  const pid = (await client.query('SELECT pg_backend_pid() AS p')).rows[0].p as number;
  const running = client.query('SELECT pg_sleep(600)').catch((error: Error) => error);
  const vanish = () => {
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    client.release(true);
  };
  return { pid, running, vanish };
}

/** Whether backend `pid` is still there. */
async function isAlive(pool: pg.Pool, pid: number): Promise<boolean> {
  return (await pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 1;
}

/** Whether backend `pid` is running its `pg_sleep`. */
async function isSleeping(pool: pg.Pool, pid: number): Promise<boolean> {
  const { rows } = await pool.query<{ query: string; state: string }>(
    'SELECT query, state FROM pg_stat_activity WHERE pid = $1',
    [pid],
  );
  return rows[0]?.state === 'active' && rows[0].query.includes('pg_sleep');
}

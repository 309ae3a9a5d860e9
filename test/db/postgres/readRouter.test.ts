/**
 * The read router's choices (db/postgres/replicas.ts) over real pools of a throw-away cluster: which
 * errors make it try another server, turns and least busy first, the back-off of a replica that
 * cannot be reached (a closed port). test/db/postgres/replicas.test.ts runs it against real standbys.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgresPool } from '../../../src/db/postgres/client.js';
import { ReadRouter, serverUnavailable } from '../../../src/db/postgres/replicas.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

/** A port of 127.0.0.1 nothing listens on (below 1024: no test server takes it). */
const CLOSED_PORT = '1';

describePostgres('read router: another server only when one is unavailable, least busy first', () => {
  let cluster: PostgresCluster;
  let url: string;
  let primary: pg.Pool;
  const routers: ReadRouter[] = [];

  beforeAll(async () => {
    cluster = await startPostgres();
    url = (await cluster.createDatabase('router')).url;
    primary = postgresPool({ connectionString: url, display: 'primary' });
  }, 60_000);

  afterAll(async () => {
    for (const router of routers) await router.close();
    await primary?.end();
    await cluster?.stop();
  });

  /** `url` with one part changed. */
  const urlWith = (part: 'password' | 'pathname' | 'port', value: string) => {
    const changed = new URL(url);
    changed[part] = value;
    return changed.toString();
  };
  const replica = (display: string, connectionString = url) => ({
    display,
    pool: postgresPool({ connectionString, display }, { connectTimeoutMs: 2000 }),
  });
  const router = (...args: ConstructorParameters<typeof ReadRouter>) => {
    const made = new ReadRouter(...args);
    routers.push(made);
    return made;
  };

  /** The error of `sql` on a new connection to `connectionString`. */
  async function errorOf(connectionString: string, sql = 'SELECT 1'): Promise<unknown> {
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query(sql);
    } catch (error) {
      return error;
    } finally {
      await client.end().catch(() => {});
    }
    throw new Error(`no error from ${sql}`);
  }

  it('counts a refused login, an unknown database and a closed port as unavailable, a bad statement not', async () => {
    const unavailable = [
      await errorOf(urlWith('password', 'wrong')),
      await errorOf(urlWith('pathname', '/no_such_database')),
      await errorOf(urlWith('port', CLOSED_PORT)),
    ];
    expect(unavailable.map((error) => (error as { code?: string }).code)).toEqual([
      '28P01',
      '3D000',
      'ECONNREFUSED',
    ]);
    expect(unavailable.map(serverUnavailable)).toEqual([true, true, true]);
    expect(serverUnavailable(await errorOf(url, 'SELECT no_such_column FROM pg_class'))).toBe(false);
  });

  it('runs a bad statement once: its error, not the primary', async () => {
    const reads = router({ pool: primary, display: 'primary' }, [replica('r')]);
    await expect(reads.pool().query('SELECT no_such_column FROM pg_class')).rejects.toMatchObject({
      code: '42703',
    });
    expect(reads.servers().map((s) => [s.reads, s.failures])).toEqual([
      [0, 0],
      [0, 0],
    ]);
  });

  it('moves a session off its replica once another read finds that replica unavailable, without trying it', async () => {
    const { url: gone } = await cluster.createDatabase('router_gone');
    const reads = router({ pool: primary, display: 'primary' }, [replica('r', gone)]);
    const session = reads.session();
    await session.query('SELECT 1');
    expect(reads.servers()[0]!.reads).toBe(1);
    await cluster.psql('postgres', 'DROP DATABASE router_gone WITH (FORCE)');
    // A read outside the session finds the replica unavailable (3D000) and skips it.
    await reads.pool().query('SELECT 1');
    expect(reads.servers()[0]!.failures).toBe(1);
    // The session leaves it at once: no second failure.
    await session.query('SELECT 1');
    expect(reads.servers().map((s) => [s.reads, s.failures])).toEqual([
      [1, 1],
      [2, 0],
    ]);
  });

  it('takes turns between replicas that are not busy, and goes to the least busy first', async () => {
    const reads = router({ pool: primary, display: 'primary' }, [replica('a'), replica('b')]);
    for (let i = 0; i < 4; i++) await reads.pool().query('SELECT 1');
    expect(reads.servers().map((s) => s.reads)).toEqual([2, 2, 0]);
    // A read made of several statements holds a connection of one replica: the other answers.
    const held = await reads.pool().connect();
    const busy = reads.servers().findIndex((s) => s.reads === 3);
    for (let i = 0; i < 3; i++) await reads.pool().query('SELECT 1');
    expect(reads.servers()[1 - busy]!.reads).toBe(5);
    held.release();
    expect(reads.servers()[2]!.reads).toBe(0);
  });

  it('skips a replica that cannot be reached for 1, 2, 4 s (its clock), reading from the primary meanwhile', async () => {
    let clock = 0;
    const skips: string[] = [];
    const reads = router(
      { pool: primary, display: 'primary' },
      [replica('down', urlWith('port', CLOSED_PORT))],
      {
        now: () => clock,
        onSkip: ({ display, error, skipMs }) =>
          skips.push(`${display} ${(error as { code?: string }).code} ${skipMs}`),
      },
    );
    const session = reads.session();
    await session.query('SELECT 1');
    await reads.pool().query('SELECT 1');
    expect(reads.servers()).toEqual([
      { display: 'down', replica: true, reads: 0, failures: 1, skippedUntil: 1000 },
      { display: 'primary', replica: false, reads: 2, failures: 0, skippedUntil: undefined },
    ]);
    clock = 1000;
    await reads.pool().query('SELECT 1');
    clock = 3000;
    await reads.pool().query('SELECT 1');
    expect(skips).toEqual(['down ECONNREFUSED 1000', 'down ECONNREFUSED 2000', 'down ECONNREFUSED 4000']);
    // A session that moved to the primary stays there (its reads keep to one server).
    clock = 10_000;
    await session.query('SELECT 1');
    expect(skips).toHaveLength(3);
    expect(reads.servers()[1]!.reads).toBe(5);
  });
});

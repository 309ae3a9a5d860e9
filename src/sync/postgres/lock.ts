import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { LockHolder } from '../../db/lock.js';
import type { PostgresStore } from '../../db/postgres/client.js';
import { WRITER_LOCK_KEY, WRITER_LOCK_PARTS, writerLockHeldSql } from '../../db/postgres/writerSession.js';
import type { Logger } from '../../logger.js';
import { LockHeldError, LockLostError } from '../errors.js';

/**
 * The writer lock of a PostgreSQL database (issue 17): a session advisory lock
 * (`pg_try_advisory_lock`) held by one connection of the writer for as long as it writes, so one
 * writer at a time, whichever machine it runs on. PostgreSQL releases it when that session ends, a
 * crashed or killed writer included: no heartbeat decides staleness, unlike the SQLite lock
 * (sync/lock.ts). The `sync_lock` row only names the holder, so that a second writer gets the same
 * {@link LockHeldError} (exit 5) as on SQLite; its heartbeat also notices a lost connection, after
 * which the lock is no longer held and the writer must stop (`lost`).
 */

/** Options of {@link acquirePostgresWriterLock}. Durations in milliseconds. */
export interface PostgresWriterLockOptions {
  /** Wait for the holder to finish (polling) instead of failing. Default false. */
  wait?: boolean;
  /** How often a waiting writer asks again. Default 1 000. */
  pollMs?: number;
  /** How often the holder refreshes `sync_lock.heartbeat_at` (and checks its connection). Default 10 000. */
  heartbeatMs?: number;
  logger?: Logger;
  /** Aborts waiting. */
  signal?: AbortSignal;
  /** This process as the lock records it; defaults to the real pid and host. */
  pid?: number;
  host?: string;
  now?: () => Date;
}

/** A held PostgreSQL writer lock. */
export interface PostgresWriterLock {
  readonly holder: LockHolder;
  /** The server process of the session that holds it (`pg_backend_pid()`). */
  readonly backendPid: number;
  /** Aborted when the lock's connection broke: PostgreSQL released the lock, another writer may take it. */
  readonly lost: AbortSignal;
  /** Unlocks, removes the holder row and returns the connection. Idempotent. */
  release(): Promise<void>;
}

const key = WRITER_LOCK_KEY.toString();

/** The holder row. */
async function readHolder(store: PostgresStore): Promise<LockHolder | undefined> {
  const { rows } = await store.pool.query<LockHolder>(
    `SELECT pid, host, acquired_at AS "acquiredAt", heartbeat_at AS "heartbeatAt" FROM sync_lock WHERE id = 1`,
  );
  return rows[0];
}

/**
 * Takes the writer lock of `store`'s database on a connection of its own, waiting for it with `wait`.
 * @throws LockHeldError naming the holder when another writer has it and `wait` is off; the abort
 *   reason when `signal` aborts while waiting; connection errors.
 */
export async function acquirePostgresWriterLock(
  store: PostgresStore,
  options: PostgresWriterLockOptions = {},
): Promise<PostgresWriterLock> {
  const now = options.now ?? (() => new Date());
  let announced = false;
  for (;;) {
    options.signal?.throwIfAborted();
    const client = await store.pool.connect();
    let taken = false;
    try {
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key]);
      taken = rows[0]!.ok;
    } finally {
      if (!taken) client.release();
    }
    if (taken) return holdLock(client, options, now);
    const at = now().toISOString();
    // Between a holder's lock and its row there is a moment without the row: it is still a holder.
    const holder = (await readHolder(store)) ?? { pid: 0, host: 'unknown', acquiredAt: at, heartbeatAt: at };
    if (!options.wait) throw new LockHeldError(holder, store.display);
    if (!announced) {
      announced = true;
      options.logger?.warn(
        { event: 'lock-wait', holder },
        `waiting for the writer lock: pid ${holder.pid} on ${holder.host} writes ${store.display}`,
      );
    }
    const poll = options.pollMs ?? 1000;
    try {
      await sleep(Math.round(poll * (0.75 + Math.random() * 0.5)), undefined, { signal: options.signal });
    } catch (error) {
      options.signal?.throwIfAborted();
      throw error;
    }
  }
}

async function holdLock(
  client: pg.PoolClient,
  options: PostgresWriterLockOptions,
  now: () => Date,
): Promise<PostgresWriterLock> {
  const at = now().toISOString();
  const holder: LockHolder = {
    pid: options.pid ?? process.pid,
    host: options.host ?? hostname(),
    acquiredAt: at,
    heartbeatAt: at,
  };
  const lost = new AbortController();
  let broken: Error | undefined;
  const loseLock = (error: Error) => {
    if (lost.signal.aborted) return;
    broken = error;
    options.logger?.error(
      { event: 'lock-lost', err: error.message },
      'the connection holding the writer lock broke: the lock is lost',
    );
    lost.abort(new LockLostError(`its database connection broke (${error.message})`));
  };
  client.on('error', loseLock);
  let backendPid: number;
  try {
    backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await client.query(
      `INSERT INTO sync_lock (id, pid, host, acquired_at, heartbeat_at) VALUES (1, $1, $2, $3, $3)
       ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, host = excluded.host,
         acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at`,
      [holder.pid, holder.host, at],
    );
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  const timer = setInterval(() => {
    const beat = now().toISOString();
    client.query('UPDATE sync_lock SET heartbeat_at = $1 WHERE id = 1', [beat]).then(
      () => {
        holder.heartbeatAt = beat;
      },
      (error: Error) => loseLock(error),
    );
  }, options.heartbeatMs ?? 10_000);
  timer.unref();
  let released: Promise<void> | undefined;
  const release = async () => {
    clearInterval(timer);
    if (broken) {
      client.release(broken);
      return;
    }
    try {
      await client.query(
        'DELETE FROM sync_lock WHERE id = 1 AND pid = $1 AND host = $2 AND acquired_at = $3',
        [holder.pid, holder.host, holder.acquiredAt],
      );
      await client.query('SELECT pg_advisory_unlock($1)', [key]);
      client.removeListener('error', loseLock);
      client.release();
    } catch (error) {
      // Closing the connection ends the session, which releases the lock anyway.
      client.release(error as Error);
    }
  };
  return {
    holder,
    backendPid,
    lost: lost.signal,
    release: () => {
      released ??= release();
      return released;
    },
  };
}

/**
 * Ends this process's own earlier session `backendPid` when it still holds the writer lock: after a
 * break only the client saw (a network cut, a failover of an address), the server keeps that session,
 * and its lock, until TCP keepalive ends it, which may take hours. A session that no longer holds the
 * lock is left alone.
 * @returns whether a session was ended
 * @throws connection errors
 */
export async function endStaleWriterSession(store: PostgresStore, backendPid: number): Promise<boolean> {
  const { rows } = await store.pool.query<{ ended: boolean }>(
    `SELECT pg_terminate_backend(pid) AS ended FROM pg_locks WHERE pid = $1 AND ${writerLockHeldSql(2)}`,
    [backendPid, ...WRITER_LOCK_PARTS],
  );
  return rows.some((row) => row.ended);
}

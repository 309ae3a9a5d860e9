import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '../db/client.js';
import { type LockHolder, lockHolder } from '../db/lock.js';
import type { Logger } from '../logger.js';
import { LockHeldError, LockLostError } from './errors.js';

/**
 * The writer lock (issue 5): one row of `sync_lock` names the process that syncs into a database,
 * so that a second sync reports who holds it instead of interleaving its writes. The holder
 * refreshes `heartbeat_at`; a holder whose heartbeat is older than `staleMs`, or whose pid is dead
 * on this same host, has crashed and its lock is taken over. Taking the lock happens inside
 * `BEGIN IMMEDIATE`, so two contenders can never both win.
 */

/** Options of {@link acquireWriterLock}. Durations in milliseconds. */
export interface WriterLockOptions {
  /** Wait for the holder to finish (polling) instead of failing. Default false. */
  wait?: boolean;
  /** A heartbeat older than this means the holder is gone. Default 60 000. */
  staleMs?: number;
  /** How often the holder refreshes its heartbeat. Default staleMs / 6. */
  heartbeatMs?: number;
  /** How often a waiting sync looks again. Default 1 000. */
  pollMs?: number;
  logger?: Logger;
  /** Aborts waiting. */
  signal?: AbortSignal;
  /** This process as the lock records it; defaults to the real pid and host (tests pass others). */
  pid?: number;
  host?: string;
  now?: () => Date;
}

/** A held writer lock. */
export interface WriterLock {
  readonly holder: LockHolder;
  /** Aborted when the lock was lost (another process took it over, believing this one dead). */
  readonly lost: AbortSignal;
  /** Refreshes the heartbeat now (also done on a timer). */
  heartbeat(): void;
  /** Stops the heartbeat and deletes the row if it is still this holder's. Idempotent. */
  release(): void;
}

const DEFAULT_STALE_MS = 60_000;

/** True when `pid` is a live process of this host (EPERM: alive, not ours). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Why `holder` no longer counts, or null while it does. */
function staleReason(
  holder: LockHolder,
  me: { pid: number; host: string },
  staleMs: number,
  now: Date,
): string | null {
  const age = now.getTime() - Date.parse(holder.heartbeatAt);
  if (!(age <= staleMs)) return `its heartbeat is ${Math.round(age / 1000)} s old`;
  if (holder.host === me.host && holder.pid !== me.pid && !pidAlive(holder.pid)) {
    return `process ${holder.pid} no longer runs on ${holder.host}`;
  }
  return null;
}

/** Who asks for the lock, and after how long (ms) a holder's heartbeat counts as stale. */
interface Claim {
  me: { pid: number; host: string };
  staleMs: number;
  logger?: Logger;
}

/** What an attempt found: the lock taken, or the live holder that has it. */
type Attempt = { acquired: LockHolder } | { heldBy: LockHolder };

/** One attempt: takes the lock and returns the holder, or returns the live holder that has it. */
function tryAcquire(store: Store, { me, staleMs, logger }: Claim, now: Date): Attempt {
  const db = store.sqlite;
  return db
    .transaction(() => {
      const current = lockHolder(store);
      if (current) {
        const reason = staleReason(current, me, staleMs, now);
        if (reason === null) return { heldBy: current };
        logger?.warn(
          { event: 'lock-takeover', holder: current, reason },
          `taking over the writer lock of pid ${current.pid} on ${current.host}: ${reason}`,
        );
      }
      const at = now.toISOString();
      const holder: LockHolder = { pid: me.pid, host: me.host, acquiredAt: at, heartbeatAt: at };
      db.prepare(
        `INSERT OR REPLACE INTO sync_lock (id, pid, host, acquired_at, heartbeat_at) VALUES (1, ?, ?, ?, ?)`,
      ).run(holder.pid, holder.host, holder.acquiredAt, holder.heartbeatAt);
      return { acquired: holder };
    })
    .immediate();
}

/**
 * {@link tryAcquire}, where a database busy past the busy timeout counts as held: its holder is in
 * the middle of a long write transaction (its heartbeat commits with it), so it is alive.
 */
function tryAcquireOrBusy(store: Store, claim: Claim, now: Date): Attempt {
  try {
    return tryAcquire(store, claim, now);
  } catch (error) {
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
    const at = now.toISOString();
    return {
      heldBy: lockHolder(store) ?? {
        pid: 0,
        host: 'unknown (database busy)',
        acquiredAt: at,
        heartbeatAt: at,
      },
    };
  }
}

/**
 * Takes the writer lock of `store`'s database for this process, waiting for it with `wait`.
 * The heartbeat timer does not keep the process alive. The `sync_lock` table comes with the schema.
 * @throws LockHeldError when a live holder has it (or keeps the database busy) and `wait` is off;
 *   the abort reason when `signal` aborts while waiting; other SQLite errors.
 */
export async function acquireWriterLock(store: Store, options: WriterLockOptions = {}): Promise<WriterLock> {
  const me = { pid: options.pid ?? process.pid, host: options.host ?? hostname() };
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const now = options.now ?? (() => new Date());
  let announced = false;
  for (;;) {
    options.signal?.throwIfAborted();
    const outcome = tryAcquireOrBusy(store, { me, staleMs, logger: options.logger }, now());
    if ('acquired' in outcome) return holdLock(store, outcome.acquired, staleMs, options, now);
    if (!options.wait) throw new LockHeldError(outcome.heldBy, store.path);
    if (!announced) {
      announced = true;
      options.logger?.warn(
        { event: 'lock-wait', holder: outcome.heldBy },
        `waiting for the writer lock: pid ${outcome.heldBy.pid} on ${outcome.heldBy.host} syncs ${store.path}`,
      );
    }
    const poll = options.pollMs ?? 1000;
    try {
      await sleep(Math.round(poll * (0.75 + Math.random() * 0.5)), undefined, { signal: options.signal });
    } catch (error) {
      // Report why waiting stopped (e.g. "stopped by SIGTERM"), not a bare AbortError.
      options.signal?.throwIfAborted();
      throw error;
    }
  }
}

function holdLock(
  store: Store,
  holder: LockHolder,
  staleMs: number,
  options: WriterLockOptions,
  now: () => Date,
): WriterLock {
  const lost = new AbortController();
  const mine = 'pid = ? AND host = ? AND acquired_at = ?';
  const key = [holder.pid, holder.host, holder.acquiredAt] as const;
  const heartbeat = () => {
    if (lost.signal.aborted || !store.sqlite.open) return;
    try {
      // Inside a running ingest transaction this update commits with it; no other writer can take
      // the lock while that transaction holds the database anyway.
      const at = now().toISOString();
      const changed = store.sqlite
        .prepare(`UPDATE sync_lock SET heartbeat_at = ? WHERE id = 1 AND ${mine}`)
        .run(at, ...key).changes;
      if (changed === 0) {
        options.logger?.error(
          { event: 'lock-lost', holder },
          'the writer lock was taken over by another sync',
        );
        lost.abort(new LockLostError('another sync took it over, taking this one for stopped'));
      } else holder.heartbeatAt = at;
    } catch (error) {
      // Busy connection (a statement iterating) or database: the next beat tries again.
      options.logger?.debug(
        { event: 'lock-heartbeat-skipped', err: (error as Error).message },
        'heartbeat skipped',
      );
    }
  };
  const timer = setInterval(heartbeat, options.heartbeatMs ?? Math.max(10, Math.floor(staleMs / 6)));
  timer.unref();
  let released = false;
  return {
    holder,
    lost: lost.signal,
    heartbeat,
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      if (!store.sqlite.open) return;
      try {
        store.sqlite.prepare(`DELETE FROM sync_lock WHERE id = 1 AND ${mine}`).run(...key);
      } catch (error) {
        // A crash-like exit: the next sync sees a dead pid or a stale heartbeat and takes over.
        options.logger?.warn(
          { event: 'lock-release-failed', err: (error as Error).message },
          'cannot release the writer lock',
        );
      }
    },
  };
}

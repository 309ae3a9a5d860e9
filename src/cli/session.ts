import type { Config, Flags } from '../config.js';
import { openStore, type Store } from '../db/client.js';
import { markDemo } from '../db/status.js';
import { createLogger, type Logger } from '../logger.js';
import { createOps, type Ops } from '../ops/wiring.js';
import { acquireWriterLock } from '../sync/lock.js';
import type { CommandContext } from './command.js';
import { EXIT } from './exit.js';
import {
  chooseDatabase,
  choosePostgres,
  type DatabaseChoice,
  type FeedTarget,
  feedTarget,
  type PostgresChoice,
  requireExistingDatabase,
} from './targets.js';
import { VERSION } from './version.js';

export { VERSION } from './version.js';

/** The logger of a command run: level and format from the config. */
export function commandLogger(config: Config): Logger {
  return createLogger(config.logLevel, { service: 'livefeed' }, config.logFormat, !config.noColor);
}

/**
 * Aborts on SIGINT/SIGTERM so long work stops cleanly (current transaction finished or rolled
 * back); a second signal ends the process at once.
 */
function shutdownSignal(logger: Logger, forceExit: (code: number) => never): AbortSignal {
  const controller = new AbortController();
  const stop = (signal: string) => {
    if (controller.signal.aborted) forceExit(EXIT.interrupted);
    logger.info({ event: 'shutdown', signal }, 'stopping');
    controller.abort(new Error(`stopped by ${signal}`));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return controller.signal;
}

/** The commands that run a session: sync, serve, or both in one process. */
export type SessionMode = 'sync' | 'serve' | 'start';

/** What `sync`, `serve` and `start` share in one process; {@link Session.close} releases it all. */
export interface Session {
  mode: SessionMode;
  config: Config;
  flags: Flags;
  logger: Logger;
  /** Aborted by SIGINT/SIGTERM. */
  signal: AbortSignal;
  /** A SQLite file, or a PostgreSQL database. */
  database: DatabaseChoice | PostgresChoice;
  target: FeedTarget;
  ops: Ops;
  /**
   * Opens the SQLite database (read-write, migrated); closed with the session.
   * @throws Error for a PostgreSQL database: its command opens it itself (cli/syncPostgres.ts).
   */
  open(): Store;
  /** Closes `store` with the session. */
  adopt(store: Store): Store;
  /** Stops the sample feed and closes every store opened. */
  close(): Promise<void>;
}

/**
 * Opens a session: logger, shutdown signal, the database (serve: it must exist) and the feed
 * (serve: none; start without a token, or --demo: the bundled sample feed).
 * @throws ConfigError (exit 2) for a missing database to serve or no token for `sync`.
 */
export async function openSession(mode: SessionMode, ctx: CommandContext): Promise<Session> {
  const { config, flags } = ctx;
  const logger = commandLogger(config);
  const signal = shutdownSignal(logger, ctx.forceExit);
  const database = choosePostgres(config) ?? chooseDatabase(mode, config, flags);
  // A PostgreSQL database is there or not once opened: a new one is migrated and serves nothing yet.
  if (mode === 'serve' && database.kind === 'sqlite') requireExistingDatabase(database);
  const target: FeedTarget =
    mode === 'serve'
      ? {
          feedRoot: config.feedUrl,
          token: undefined,
          demo: database.kind === 'sqlite' ? database.demo : !!flags.demo,
        }
      : await feedTarget(config, logger, mode === 'start' || !!flags.demo, !!flags.demo);
  // Only a process that serves GraphQL has subscribers: `sync` does not load graphql-yoga's pubsub.
  const events = mode === 'sync' ? undefined : (await import('../ops/events.js')).createPacketEvents();
  const ops = await createOps({ version: VERSION, deployment: config.deployment, demo: target.demo }, events);
  const stores: Store[] = [];
  const adopt = (store: Store) => {
    stores.push(store);
    return store;
  };
  const session: Session = {
    mode,
    config,
    flags,
    logger,
    signal,
    database,
    target,
    ops,
    adopt,
    open: () => adopt(openStore(sqliteDatabase(database).path)),
    close: async () => {
      await target.sampleFeed?.close();
      for (const store of stores) store.close();
    },
  };
  try {
    // PostgreSQL: the sync marks it (cli/syncPostgres.ts).
    if (target.demo && mode !== 'serve' && database.kind === 'sqlite') markDemo(session.open());
  } catch (error) {
    await session.close();
    throw error;
  }
  return session;
}

/**
 * The SQLite file of `database`.
 * @throws Error for a PostgreSQL database (never reached: choosePostgres refuses those commands).
 */
export function sqliteDatabase(database: DatabaseChoice | PostgresChoice): DatabaseChoice {
  if (database.kind === 'sqlite') return database;
  throw new Error(`this command works on a SQLite file, not on PostgreSQL ${database.connection.display}`);
}

/** A writer lock as {@link withLock} holds it: `lost` aborts the work, `release` ends it. */
export interface HeldLock {
  readonly lost: AbortSignal;
  release(): void | Promise<void>;
}

/**
 * Runs `work`, which stops when `lost` (the writer lock was lost) or `stopped` (a signal) aborts.
 * Work ended by a lost lock looks like work stopped by a signal, which exits 0; unless a signal
 * stopped it first, its LockLostError is thrown instead of what `work` returned or threw, so that
 * the command exits 4 and a service manager starts it again (README, Exit codes).
 * @throws LockLostError (sync/errors.ts) as above; whatever `work` throws
 */
export async function failIfLockLost<T>(
  lost: AbortSignal,
  stopped: AbortSignal,
  work: () => Promise<T>,
): Promise<T> {
  const lostFirst = () => lost.aborted && !stopped.aborted;
  let result: T;
  try {
    result = await work();
  } catch (error) {
    throw lostFirst() ? lost.reason : error;
  }
  if (lostFirst()) throw lost.reason;
  return result;
}

/**
 * Runs `work` holding the writer lock that `acquire` takes, for the one-shot writers (`import`,
 * `bootstrap`): the signal `work` gets aborts on SIGINT/SIGTERM (with `stopMessage` as the reason)
 * or when the lock is lost; the lock and the signal handlers are released however it ends.
 * @throws whatever `acquire` throws (LockHeldError when another writer holds it) or `work` throws.
 */
export async function withLock<T>(
  acquire: (signal: AbortSignal) => Promise<HeldLock>,
  stopMessage: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const stop = () => controller.abort(new Error(stopMessage));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const lock = await acquire(controller.signal);
    try {
      return await failIfLockLost(lock.lost, controller.signal, () =>
        work(AbortSignal.any([controller.signal, lock.lost])),
      );
    } finally {
      await lock.release();
    }
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
  }
}

/**
 * {@link withLock} with the writer lock of a SQLite `store` (sync/lock.ts).
 * @throws LockHeldError when another writer holds the lock; whatever `work` throws.
 */
export function withWriterLock<T>(
  store: Store,
  logger: Logger,
  stopMessage: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return withLock((signal) => acquireWriterLock(store, { logger, signal }), stopMessage, work);
}

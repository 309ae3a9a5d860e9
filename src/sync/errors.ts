import type { LockHolder } from '../db/lock.js';

/**
 * The sync's errors that the CLI maps to exit codes (cli/exit.ts), in a module of their own: every
 * command imports cli/exit.ts at start-up, and the modules that throw them load openpgp and
 * drizzle, which a command that never meets them need not load.
 */

/** Raised when another live sync holds the lock; the message names it. */
export class LockHeldError extends Error {
  override name = 'LockHeldError';
  constructor(
    readonly holder: LockHolder,
    readonly database: string,
  ) {
    super(
      `another sync is writing ${database}: pid ${holder.pid} on ${holder.host}, since ${holder.acquiredAt}, ` +
        `last heartbeat ${holder.heartbeatAt} (sync and start take --wait to wait for it; or run this again once it is done)`,
    );
  }
}

/**
 * The writer lock was lost while held: on PostgreSQL its connection broke (a server restart, a
 * network cut), on SQLite another sync took it over (this one's heartbeat was too old), so another
 * writer may have it now. The writer stops rather than write without it;
 * the CLI exits 4 (README, Exit codes) so that a service manager's restart on failure starts it
 * again, where a stop by a signal exits 0.
 */
export class LockLostError extends Error {
  override name = 'LockLostError';
  /** @param how what happened to it, e.g. `its database connection broke (Connection terminated)` */
  constructor(readonly how: string) {
    super(
      `the writer lock was lost: ${how}; livefeed stopped rather than write without it. ` +
        'Start it again once the database is back (README, Exit codes)',
    );
  }
}

/**
 * Raised at start-up for a signing key every signature by which would be refused (RSA or DSA under
 * 2048 bits): a configuration mistake, which the CLI reports as one (exit 2).
 */
export class WeakSigningKeyError extends Error {
  override name = 'WeakSigningKeyError';
}

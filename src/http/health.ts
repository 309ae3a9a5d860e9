import type { StatusReads } from '../db/statusReads.js';
import { respond } from './respond.js';
import type { Route } from './route.js';

/** `GET /health`: 200 `ok` while the process serves HTTP (liveness). */
export function healthRoute(): Route {
  return {
    handle(req, res, url) {
      if (url.pathname !== '/health') return false;
      respond(req, res, 200, 'ok\n');
      return true;
    },
  };
}

/** The database `/ready` checks: its reads, and its name in messages (a path, or a URL without password). */
export interface ReadyDatabase {
  reads: Pick<StatusReads, 'ping' | 'migrationState' | 'anyPacketSynced'>;
  display: string;
  /** Why it is served read-only (a SQLite file on a read-only mount), if it is. */
  readOnly?: string;
}

/**
 * Why the instance cannot serve data yet, or null when it can: the database answers, every
 * migration of its dialect (`drizzle/sqlite/` or `drizzle/postgres/`, as recorded by drizzle's
 * migrator: `__drizzle_migrations`, on PostgreSQL `drizzle.__drizzle_migrations`) is applied, and
 * at least one packet is complete. Staleness is not a
 * reason (see `/freshness`): a stale copy is still served, so an upstream outage never takes
 * every replica out of service.
 */
export async function notReadyReason(database: ReadyDatabase): Promise<string | null> {
  const { reads, display } = database;
  try {
    await reads.ping();
  } catch (error) {
    return `database ${display} is not open: ${(error as Error).message}`;
  }
  try {
    const migrations = await reads.migrationState();
    if (migrations.pending > 0) {
      return `database ${display}: ${migrations.pending} of ${migrations.expected} migrations not applied`;
    }
  } catch (error) {
    return `database ${display}: cannot check migrations: ${(error as Error).message}`;
  }
  try {
    if (!(await reads.anyPacketSynced())) return 'no packet synced yet';
  } catch (error) {
    return `database ${display}: cannot read packets: ${(error as Error).message}`;
  }
  return null;
}

/** `GET /ready`: 200 `ready` (`ready (read-only: <why>)` for a database opened read-only), or 503 `not ready: <reason>` (readiness; see {@link notReadyReason}). */
export function readyRoute(database: ReadyDatabase): Route {
  return {
    async handle(req, res, url) {
      if (url.pathname !== '/ready') return false;
      const reason = await notReadyReason(database);
      // A database served read-only (read-only mount) is ready, and says so: nothing is synced here.
      const mode = database.readOnly ? ` (read-only: ${database.readOnly})` : '';
      if (reason === null) respond(req, res, 200, `ready${mode}\n`);
      else respond(req, res, 503, `not ready: ${reason}${mode}\n`);
      return true;
    },
  };
}

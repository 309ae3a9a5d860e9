import type { Store } from '../db/client.js';
import { anyPacketSynced, migrationState } from '../db/status.js';
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

/**
 * Why the instance cannot serve data yet, or null when it can: the database answers, every
 * migration in `drizzle/sqlite/` is applied, and at least one packet is complete. Staleness is not a
 * reason (see `/freshness`): a stale copy is still served, so an upstream outage never takes
 * every replica out of service.
 */
export function notReadyReason(store: Store): string | null {
  try {
    store.sqlite.prepare('SELECT 1').get();
  } catch (error) {
    return `database ${store.path} is not open: ${(error as Error).message}`;
  }
  try {
    const migrations = migrationState(store);
    if (migrations.pending > 0) {
      return `database ${store.path}: ${migrations.pending} of ${migrations.expected} migrations not applied`;
    }
  } catch (error) {
    return `database ${store.path}: cannot check migrations: ${(error as Error).message}`;
  }
  if (!anyPacketSynced(store)) return 'no packet synced yet';
  return null;
}

/** `GET /ready`: 200 `ready` (`ready (read-only: <why>)` for a database opened read-only), or 503 `not ready: <reason>` (readiness; see {@link notReadyReason}). */
export function readyRoute(store: Store): Route {
  return {
    handle(req, res, url) {
      if (url.pathname !== '/ready') return false;
      const reason = notReadyReason(store);
      // A database served read-only (read-only mount) is ready, and says so: nothing is synced here.
      const mode = store.readOnly ? ` (read-only: ${store.readOnly})` : '';
      if (reason === null) respond(req, res, 200, `ready${mode}\n`);
      else respond(req, res, 503, `not ready: ${reason}${mode}\n`);
      return true;
    },
  };
}

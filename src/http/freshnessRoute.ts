import { serverUnavailable } from '../db/unavailable.js';
import { type FreshnessReads, type FreshnessThresholds, freshness } from '../ops/freshness.js';
import { respond } from './respond.js';
import type { Route } from './route.js';

/**
 * `GET /freshness`: one line in upstream's replication-check style, `OK: ...`, `WARNING: ...` or
 * `CRITICAL: ...` with the newest local packet, its age and the lag (see ops/freshness.ts). Status 200
 * for OK and WARNING, 503 for CRITICAL, so plain HTTP monitors alert too; `?format=json` gives the
 * same facts as JSON. Never part of readiness. Reads `reads` (SQLite or PostgreSQL); a database that
 * does not answer is CRITICAL (503), its error told to `onError`; any other error is thrown.
 */
export function freshnessRoute(
  reads: FreshnessReads,
  thresholds: FreshnessThresholds,
  now: () => Date = () => new Date(),
  onError: (error: unknown) => void = () => {},
): Route {
  return {
    async handle(req, res, url) {
      if (url.pathname !== '/freshness') return false;
      let f: Awaited<ReturnType<typeof freshness>>;
      try {
        f = await freshness(reads, thresholds, now());
      } catch (error) {
        if (!serverUnavailable(error)) throw error;
        onError(error);
        // The database does not answer (a PostgreSQL server restarting): a monitor must alert. The
        // server's address stays in the log, not in an answer anyone may read.
        const message = 'CRITICAL: cannot read the database: it does not answer (see the log)';
        const json = url.searchParams.get('format') === 'json';
        const body = json ? `${JSON.stringify({ level: 'CRITICAL', message })}\n` : `${message}\n`;
        respond(req, res, 503, body, json ? 'application/json; charset=utf-8' : undefined);
        return true;
      }
      const status = f.level === 'CRITICAL' ? 503 : 200;
      if (url.searchParams.get('format') === 'json') {
        const body = {
          level: f.level,
          message: f.message,
          localLatest: f.localLatest,
          localTime: f.localTime?.toISOString() ?? null,
          ageSeconds: f.ageSeconds,
          lagSeconds: f.lagSeconds,
          lagPackets: f.lagPackets,
          upstreamLatest: f.upstream?.latest ?? null,
          upstreamCheckedAt: f.upstream?.checkedAt ?? null,
          waitingForDumps: f.waiting ?? null,
          warningSeconds: thresholds.warningMs / 1000,
          criticalSeconds: thresholds.criticalMs / 1000,
        };
        respond(req, res, status, `${JSON.stringify(body)}\n`, 'application/json; charset=utf-8');
      } else respond(req, res, status, `${f.message}\n`);
      return true;
    },
  };
}

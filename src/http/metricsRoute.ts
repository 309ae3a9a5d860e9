import { serverUnavailable } from '../db/unavailable.js';
import type { Metrics } from '../ops/metrics.js';
import { respond } from './respond.js';
import type { Route } from './route.js';

/**
 * `GET /metrics`: the Prometheus text exposition of `metrics` (all names `livefeed_*`); 503 with the
 * reason in the log (`onError`) when the database its gauges read does not answer.
 */
export function metricsRoute(metrics: Metrics, onError: (error: unknown) => void = () => {}): Route {
  return {
    async handle(req, res, url) {
      if (url.pathname !== '/metrics') return false;
      let text: string;
      try {
        text = await metrics.render();
      } catch (error) {
        if (!serverUnavailable(error)) throw error;
        onError(error);
        // Its gauges read the database: one that does not answer fails the scrape (why: the log).
        respond(req, res, 503, 'cannot read the database: it does not answer (see the log)\n');
        return true;
      }
      respond(req, res, 200, text, metrics.registry.contentType);
      return true;
    },
  };
}

import type { Metrics } from '../ops/metrics.js';
import { respond } from './respond.js';
import type { Route } from './route.js';

/**
 * `GET /metrics`: the Prometheus text exposition of `metrics` (all names `livefeed_*`); 503 with the
 * error (which `onError` is told) when the database its gauges read does not answer.
 */
export function metricsRoute(metrics: Metrics, onError: (error: unknown) => void = () => {}): Route {
  return {
    async handle(req, res, url) {
      if (url.pathname !== '/metrics') return false;
      let text: string;
      try {
        text = await metrics.render();
      } catch (error) {
        onError(error);
        // Its gauges read the database: one that does not answer fails the scrape, with why.
        respond(req, res, 503, `cannot read the database: ${(error as Error).message}\n`);
        return true;
      }
      respond(req, res, 200, text, metrics.registry.contentType);
      return true;
    },
  };
}

import type { Metrics } from '../ops/metrics.js';
import { respond } from './respond.js';
import type { Route } from './route.js';

/** `GET /metrics`: the Prometheus text exposition of `metrics` (all names `livefeed_*`). */
export function metricsRoute(metrics: Metrics): Route {
  return {
    async handle(req, res, url) {
      if (url.pathname !== '/metrics') return false;
      respond(req, res, 200, await metrics.render(), metrics.registry.contentType);
      return true;
    },
  };
}

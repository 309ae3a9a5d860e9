import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Metrics } from '../../ops/metrics.js';

/** A Yoga plugin counting and timing `/graphql` requests and counting operations by type and result. */
export function graphqlMetricsPlugin(metrics: Metrics, endpoint = '/graphql'): Plugin {
  const started = new WeakMap<Request, number>();
  const isGraphql = (request: Request) => new URL(request.url).pathname === endpoint;
  const count = (operation: string, failed: boolean) =>
    metrics.graphqlOperations.inc({ operation, result: failed ? 'error' : 'ok' });
  return {
    onRequest({ request }) {
      if (isGraphql(request)) started.set(request, performance.now());
    },
    onResponse({ request, response }) {
      const start = started.get(request);
      if (start === undefined) return;
      started.delete(request);
      metrics.graphqlRequests.inc({ method: request.method, status: String(response.status) });
      metrics.graphqlDuration.observe({ method: request.method }, (performance.now() - start) / 1000);
    },
    onExecute({ args }) {
      const operation = getOperationAST(args.document, args.operationName)?.operation ?? 'unknown';
      return {
        onExecuteDone({ result }) {
          count(operation, 'errors' in result && Array.isArray(result.errors) && result.errors.length > 0);
        },
      };
    },
    onSubscribe() {
      return {
        onSubscribeResult({ result }) {
          count(
            'subscription',
            'errors' in result && Array.isArray(result.errors) && result.errors.length > 0,
          );
        },
        onSubscribeError() {
          count('subscription', true);
        },
      };
    },
  };
}

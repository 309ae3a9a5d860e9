import type { IncomingMessage, ServerResponse } from 'node:http';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Store } from '../db/client.js';
import { type Reads, sqliteReads } from '../db/reads.js';
import type { FeedClient } from '../feed/client.js';
import type { Context, ServiceInfo } from '../graphql/builder.js';
import { clientErrorLogPlugin } from '../graphql/plugins/clientErrors.js';
import { type GraphqlLimits, hardeningPlugin } from '../graphql/plugins/hardening.js';
import { jitPlugin } from '../graphql/plugins/jit.js';
import { graphqlMetricsPlugin } from '../graphql/plugins/metrics.js';
import { rawJsonPlugin } from '../graphql/plugins/rawJson.js';
import { schema } from '../graphql/schema.js';
import type { Logger } from '../logger.js';
import { createPacketEvents, type PacketEvents } from '../ops/events.js';
import { DEFAULT_FRESHNESS, type FreshnessThresholds } from '../ops/freshness.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { FileSource } from './fileSource.js';
import { filesRoute } from './files.js';
import { freshnessRoute } from './freshnessRoute.js';
import { graphiqlRoute } from './graphiql.js';
import { healthRoute, readyRoute } from './health.js';
import { metricsRoute } from './metricsRoute.js';
import { mirrorRoute } from './mirror.js';
import { rootRoute } from './root.js';
import type { Route } from './route.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  store: Store;
  /** The reads GraphQL resolvers use; default {@link sqliteReads} over `store`. */
  reads?: Reads;
  service: ServiceInfo;
  logger: Logger;
  dataDir: string;
  corsOrigins?: string[];
  /** Tokens the mirror endpoints (`/api/<database>/...`) require in `?token=`; empty or absent: open. */
  mirrorTokens?: string[];
  /**
   * Client of the feed synced from, with the upstream token: fetches files no longer kept locally on
   * demand (token added server side). Absent: such files are 410 Gone.
   */
  upstream?: FeedClient;
  /** The process's metrics (`/metrics`); default a new registry without process metrics. */
  metrics?: Metrics;
  /** The process's live events (subscription `packetSynced`); default a new pubsub. */
  events?: PacketEvents;
  /** Lag thresholds of `/freshness`; default 2 h and 6 h. */
  freshness?: FreshnessThresholds;
  /** GraphQL limits (depth, aliases, cost, body size, time budget); default DEFAULT_GRAPHQL_LIMITS. */
  graphqlLimits?: Partial<GraphqlLimits>;
}

/** The Yoga instance and a Node request handler for every livefeed HTTP path. */
export interface App {
  yoga: YogaServerInstance<Record<string, never>, Context>;
  handle(req: IncomingMessage, res: ServerResponse): void;
  metrics: Metrics;
  events: PacketEvents;
}

/**
 * Builds livefeed's HTTP application: GraphQL (and GraphiQL for browsers) on `/graphql`, the routes
 * of `src/http/` (file links on `/files/`, the mirror on `/api/<database>/`, ...). It does
 * not listen: the CLI does. Unexpected errors are masked for clients and logged.
 */
export function createApp(options: AppOptions): App {
  // The CLI passes the process's registry; apps made without one (tests) skip process metrics.
  const metrics = options.metrics ?? createMetrics({ processMetrics: false });
  metrics.useStore(options.store);
  const events = options.events ?? createPacketEvents();
  const reads = options.reads ?? sqliteReads(options.store);
  const yoga = createYoga<Record<string, never>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Browsers get GraphiQL from graphiqlRoute (compressed, cached, example from the data held).
    graphiql: false,
    plugins: [
      graphqlMetricsPlugin(metrics),
      hardeningPlugin(options.graphqlLimits),
      rawJsonPlugin(),
      jitPlugin(),
      clientErrorLogPlugin(options.logger),
    ],
    cors: options.corsOrigins?.length ? { origin: options.corsOrigins, credentials: false } : false,
    logging: {
      debug: (...args) => options.logger.debug({ event: 'graphql' }, String(args[0])),
      info: (...args) => options.logger.info({ event: 'graphql' }, String(args[0])),
      warn: (...args) => options.logger.warn({ event: 'graphql' }, String(args[0])),
      error: (...args) =>
        options.logger.error({ event: 'graphql-error', err: args[0] }, 'unexpected GraphQL error'),
    },
    context: ({ request }) => ({
      reads,
      store: options.store,
      service: options.service,
      origin: new URL(request.url).origin,
      events,
    }),
  });
  // Routes are tried in order before GraphQL; each file in src/http/ adds one.
  const files = new FileSource({
    store: options.store,
    dataDir: options.dataDir,
    upstream: options.upstream,
    logger: options.logger,
  });
  const routes: Route[] = [
    rootRoute(),
    graphiqlRoute(options.store, options.service.demo ? 'livefeed (demo)' : 'livefeed'),
    healthRoute(),
    readyRoute(options.store),
    freshnessRoute(options.store, options.freshness ?? DEFAULT_FRESHNESS),
    metricsRoute(metrics),
    filesRoute(files),
    mirrorRoute({
      store: options.store,
      source: files,
      database: options.service.database,
      tokens: options.mirrorTokens ?? [],
    }),
  ];
  return {
    yoga,
    metrics,
    events,
    handle: (req, res) => {
      void dispatch(routes, yoga, req, res, options.logger);
    },
  };
}

async function dispatch(
  routes: Route[],
  yoga: App['yoga'],
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  try {
    for (const route of routes) {
      if (await route.handle(req, res, url)) return;
    }
    await yoga(req, res);
  } catch (error) {
    logger.error(
      { event: 'http-error', path: url.pathname, err: (error as Error).message },
      'unexpected HTTP error',
    );
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Internal Server Error\n');
    } else res.destroy();
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../db/client.js';
import { type Reads, sqliteReads } from '../db/reads.js';
import type { FeedClient } from '../feed/client.js';
import type { ServiceInfo } from '../graphql/builder.js';
import type { GraphqlLimits } from '../graphql/plugins/hardening.js';
import type { Logger } from '../logger.js';
import { createPacketEvents, type PacketEvents } from '../ops/events.js';
import { DEFAULT_FRESHNESS, type FreshnessThresholds } from '../ops/freshness.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { FileSource } from './fileSource.js';
import { filesRoute } from './files.js';
import { freshnessRoute } from './freshnessRoute.js';
import { graphiqlRoute } from './graphiql.js';
import { createGraphql, type GraphqlServer } from './graphql.js';
import { healthRoute, readyRoute } from './health.js';
import { metricsRoute } from './metricsRoute.js';
import { mirrorRoute } from './mirror.js';
import { rootRoute } from './root.js';
import type { Route } from './route.js';

/** Options of {@link createApp}. */
export interface AppOptions {
  /**
   * The SQLite store served, or absent over PostgreSQL (issue 17): then `reads` and `display` are
   * required, and nothing reads a SQLite file.
   */
  store?: Store;
  /**
   * The reads of every route and GraphQL resolver (db/reads.ts: SQLite or PostgreSQL); default
   * {@link sqliteReads} over `store`.
   */
  reads?: Reads;
  /** The reads of one GraphQL request, when they differ from `reads` (http/graphql.ts, read replicas). */
  readsForRequest?: () => Reads;
  /** What messages name the database by (a URL without its password); default `store.path`. */
  display?: string;
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
  yoga: GraphqlServer;
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
  const { reads, display } = servedDatabase(options);
  // The CLI passes the process's registry; apps made without one (tests) skip process metrics.
  const metrics = options.metrics ?? createMetrics({ processMetrics: false });
  metrics.useReads(reads);
  const events = options.events ?? createPacketEvents();
  const yoga = createGraphql({
    reads,
    readsForRequest: options.readsForRequest,
    display,
    service: options.service,
    logger: options.logger,
    metrics,
    events,
    corsOrigins: options.corsOrigins,
    graphqlLimits: options.graphqlLimits,
  });
  // An operations route that could not read the database answers 503 with why, and is logged here.
  const unanswered = (path: string) => (error: unknown) =>
    options.logger.warn(
      { event: 'http-unanswered', path, err: (error as Error).message },
      `${path} answered 503: ${(error as Error).message}`,
    );
  // Routes are tried in order before GraphQL; each file in src/http/ adds one.
  const files = new FileSource({
    reads,
    dataDir: options.dataDir,
    upstream: options.upstream,
    logger: options.logger,
  });
  const routes: Route[] = [
    rootRoute(),
    graphiqlRoute(reads, options.service.demo ? 'livefeed (demo)' : 'livefeed'),
    healthRoute(),
    readyRoute({ reads, display, readOnly: options.store?.readOnly }),
    freshnessRoute(reads, options.freshness ?? DEFAULT_FRESHNESS, undefined, unanswered('/freshness')),
    metricsRoute(metrics, unanswered('/metrics')),
    filesRoute(files),
    mirrorRoute({
      reads,
      source: files,
      database: options.service.database,
      tokens: options.mirrorTokens ?? [],
      onError: unanswered('/api/'),
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

/**
 * The reads and the name of the database `options` serve.
 * @throws Error when neither a SQLite store nor `reads` and `display` are given (a programming error).
 */
function servedDatabase(options: AppOptions): { reads: Reads; display: string } {
  if (options.store) {
    return {
      reads: options.reads ?? sqliteReads(options.store),
      display: options.display ?? options.store.path,
    };
  }
  if (!options.reads || options.display === undefined)
    throw new Error('createApp needs a SQLite store, or the reads and display name of its database');
  return { reads: options.reads, display: options.display };
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

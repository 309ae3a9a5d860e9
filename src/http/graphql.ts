import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Reads } from '../db/reads.js';
import type { Context, ServiceInfo } from '../graphql/builder.js';
import { clientErrorLogPlugin } from '../graphql/plugins/clientErrors.js';
import { type GraphqlLimits, hardeningPlugin } from '../graphql/plugins/hardening.js';
import { jitPlugin } from '../graphql/plugins/jit.js';
import { graphqlMetricsPlugin } from '../graphql/plugins/metrics.js';
import { rawJsonPlugin } from '../graphql/plugins/rawJson.js';
import { schema } from '../graphql/schema.js';
import type { Logger } from '../logger.js';
import type { PacketEvents } from '../ops/events.js';
import type { Metrics } from '../ops/metrics.js';
import { ARRIVAL_WAIT_MS } from '../ops/packetArrival.js';
import { corsRefusalPlugin } from './corsRefusal.js';

/** Options of {@link createGraphql}. */
export interface GraphqlOptions {
  /** The reads of the store the resolvers answer from (db/reads.ts: SQLite or PostgreSQL). */
  reads: Reads;
  /**
   * The reads of one request, when they differ from `reads`: with read replicas
   * (db/postgres/replicaReads.ts `forRequest`), every read of a request goes to one server, so a
   * request never mixes two replicas' positions (`latestPacket` never ahead of the data it covers).
   */
  readsForRequest?: () => Reads;
  /** What the messages name the database by (a path, or a URL without its password). */
  display: string;
  service: ServiceInfo;
  logger: Logger;
  /** The registry GraphQL's request metrics go to. */
  metrics: Metrics;
  /** The process's live events (subscription `packetSynced`). */
  events: PacketEvents;
  corsOrigins?: string[];
  /** GraphQL limits (depth, aliases, cost, body size, time budget); default DEFAULT_GRAPHQL_LIMITS. */
  graphqlLimits?: Partial<GraphqlLimits>;
  /**
   * Context `arrivalWaitMs`: default ARRIVAL_WAIT_MS with `readsForRequest` (reads that may be a
   * replica's), else 0.
   */
  arrivalWaitMs?: number;
}

/** The GraphQL endpoint alone: a Yoga instance on `/graphql` (also a Node request handler). */
export type GraphqlServer = YogaServerInstance<Record<string, never>, Context>;

/**
 * livefeed's GraphQL endpoint over `options.reads` (issue 17: the same schema over SQLite and
 * PostgreSQL), with the hardening, metrics, raw JSON, JIT and client error log plugins. Browsers
 * get GraphiQL from http/graphiql.ts, not from Yoga. Unexpected errors are masked for clients and
 * logged.
 */
export function createGraphql(options: GraphqlOptions): GraphqlServer {
  const arrivalWaitMs = options.arrivalWaitMs ?? (options.readsForRequest ? ARRIVAL_WAIT_MS : 0);
  return createYoga<Record<string, never>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: false,
    plugins: [
      corsRefusalPlugin(options.corsOrigins ?? [], options.logger),
      graphqlMetricsPlugin(options.metrics),
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
      reads: options.readsForRequest?.() ?? options.reads,
      service: options.service,
      origin: new URL(request.url).origin,
      events: options.events,
      arrivalWaitMs,
    }),
  });
}

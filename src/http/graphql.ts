import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Store } from '../db/client.js';
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

/** Options of {@link createGraphql}. */
export interface GraphqlOptions {
  /** The reads of the store the resolvers answer from (db/reads.ts: SQLite or PostgreSQL). */
  reads: Reads;
  /**
   * The SQLite store, for the resolvers not ported to {@link Reads} yet (issue 17, step 4). Absent
   * on PostgreSQL: such a resolver then fails (an unexpected error, logged) instead of reading a
   * SQLite file that is not the database served.
   */
  store?: Store;
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
}

/** The GraphQL endpoint alone: a Yoga instance on `/graphql` (also a Node request handler). */
export type GraphqlServer = YogaServerInstance<Record<string, never>, Context>;

/**
 * The SQLite store of a context without one: every use throws an Error naming the database, so a
 * resolver that still reads SQLite directly fails visibly on PostgreSQL.
 */
function noSqliteStore(display: string): Store {
  return new Proxy({} as Store, {
    get(_target, key) {
      throw new Error(
        `a GraphQL field read the SQLite store (${String(key)}) on ${display}: it does not work on ` +
          'PostgreSQL yet (README, PostgreSQL (in progress))',
      );
    },
  });
}

/**
 * livefeed's GraphQL endpoint over `options.reads` (issue 17: the same schema over SQLite and
 * PostgreSQL), with the hardening, metrics, raw JSON, JIT and client error log plugins. Browsers
 * get GraphiQL from http/graphiql.ts, not from Yoga. Unexpected errors are masked for clients and
 * logged.
 */
export function createGraphql(options: GraphqlOptions): GraphqlServer {
  const store = options.store ?? noSqliteStore(options.display);
  return createYoga<Record<string, never>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: false,
    plugins: [
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
      reads: options.reads,
      store,
      service: options.service,
      origin: new URL(request.url).origin,
      events: options.events,
    }),
  });
}

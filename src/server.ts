import type { IncomingMessage, ServerResponse } from 'node:http';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { Store } from './db/client.js';
import type { Context, ServiceInfo } from './graphql/builder.js';
import { schema } from './graphql/schema.js';
import type { Logger } from './logger.js';

/** Query GraphiQL opens with. */
export const EXAMPLE_QUERY = `# livefeed: the MusicBrainz live data feed, verified and stored locally.
# Press the run button to see the newest complete packet and its JSON dumps.
query Latest {
  service { demo deployment }
  latestPacket {
    number
    timestamp
    dumps {
      entity
      status
      changeCount
      changes(first: 3) {
        nodes { mbid name entity }
      }
    }
  }
}
`;

/** Options of {@link createApp}. */
export interface AppOptions {
  store: Store;
  service: ServiceInfo;
  logger: Logger;
  dataDir: string;
  corsOrigins?: string[];
}

/**
 * A non-GraphQL HTTP route (files, mirror, health, metrics): `handle` returns false when the
 * request is not for it. Routes live in `src/http/`, one file each, and are listed in {@link createApp}.
 */
export interface Route {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean | Promise<boolean>;
}

/** The Yoga instance and a Node request handler for every livefeed HTTP path. */
export interface App {
  yoga: YogaServerInstance<Record<string, never>, Context>;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * Builds livefeed's HTTP application: GraphQL (and GraphiQL for browsers) on `/graphql`. It does
 * not listen: the CLI does. Unexpected errors are masked for clients and logged.
 */
export function createApp(options: AppOptions): App {
  const yoga = createYoga<Record<string, never>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: { title: options.service.demo ? 'livefeed (demo)' : 'livefeed', defaultQuery: EXAMPLE_QUERY },
    cors: options.corsOrigins?.length ? { origin: options.corsOrigins, credentials: false } : false,
    logging: {
      debug: (...args) => options.logger.debug({ event: 'graphql' }, String(args[0])),
      info: (...args) => options.logger.info({ event: 'graphql' }, String(args[0])),
      warn: (...args) => options.logger.warn({ event: 'graphql' }, String(args[0])),
      error: (...args) => options.logger.error({ event: 'graphql-error', err: args[0] }, 'unexpected GraphQL error'),
    },
    context: ({ request }) => ({ store: options.store, service: options.service, origin: new URL(request.url).origin }),
  });
  // Routes are tried in order before GraphQL; each file in src/http/ adds one.
  const routes: Route[] = [];
  return {
    yoga,
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
    logger.error({ event: 'http-error', path: url.pathname, err: (error as Error).message }, 'unexpected HTTP error');
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Internal Server Error\n');
    } else res.destroy();
  }
}

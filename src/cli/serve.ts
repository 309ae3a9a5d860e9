import { createServer, type Server } from 'node:http';
import { openForServing } from '../db/readOnly.js';
import { safeMessage } from '../feed/errors.js';
import { databaseName, redactUrl } from '../feed/protocol/urls.js';
import type { ServiceInfo } from '../graphql/builder.js';
import { createApp } from '../http/app.js';
import { createPacketEvents, watchCompletedPackets } from '../ops/events.js';
import type { CommandImplementation } from './command.js';
import { EXIT } from './exit.js';
import { openSession, type Session, sqliteDatabase, VERSION } from './session.js';
import { upstreamClient } from './targets.js';

function serviceInfo(session: Session): ServiceInfo {
  const { config, target } = session;
  return {
    demo: target.demo,
    deployment: config.deployment,
    feedRoot: redactUrl(target.feedRoot),
    database: databaseName(target.feedRoot),
    version: VERSION,
    entities: config.entities,
  };
}

/** Listens on the configured address; resolves with GraphiQL's URL once it does. */
async function listen(server: Server, session: Session): Promise<string> {
  const { config, logger } = session;
  const demo = session.target.demo;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    { event: 'listening', host: config.host, port, demo },
    `GraphQL on http://${config.host}:${port}/graphql${demo ? ' (demo data)' : ''}`,
  );
  return `http://${config.host}:${port}/graphql`;
}

/** The GraphQL server of a session, listening. */
export interface RunningServer {
  /** GraphiQL's URL. */
  url: string;
  /** Closes the server and every connection. */
  close(): void;
}

/**
 * Serves GraphQL from the session's database. `serve` only reads: a database it cannot write
 * (read-only mount) is opened read-only, and with no sync in the process subscriptions learn of
 * completed packets from the database.
 */
export async function startServer(session: Session): Promise<RunningServer> {
  const { config, logger, ops, mode } = session;
  const dbPath = sqliteDatabase(session.database).path;
  // `start` too: the serving connection gets the larger page cache (db/client.ts, SERVING_CACHE_BYTES).
  const store = session.adopt(openForServing(dbPath));
  if (store.readOnly)
    logger.warn(
      { event: 'read-only', db: dbPath, reason: store.readOnly },
      `serving ${dbPath} read-only: ${store.readOnly}`,
    );
  const events = ops.events ?? createPacketEvents();
  const app = createApp({
    store,
    service: serviceInfo(session),
    logger,
    dataDir: config.dataDir,
    corsOrigins: config.corsOrigins,
    mirrorTokens: config.mirrorTokens,
    upstream: upstreamClient(config, session.target, logger),
    metrics: ops.metrics,
    events,
    freshness: { warningMs: config.freshnessWarningMs, criticalMs: config.freshnessCriticalMs },
  });
  if (mode === 'serve') {
    watchCompletedPackets(store, events, {
      signal: session.signal,
      onError: (error) =>
        logger.warn({ event: 'watch-failed', err: safeMessage(error) }, 'cannot check for synced packets'),
    });
  }
  const server = createServer(app.handle);
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  try {
    return { url: await listen(server, session), close };
  } catch (error) {
    close();
    throw error;
  }
}

/** `livefeed serve`: GraphQL from a database a sync wrote, until SIGINT/SIGTERM. */
export const serveCommand: CommandImplementation = {
  async run(ctx) {
    const session = await openSession('serve', ctx);
    let server: RunningServer | undefined;
    try {
      server = await startServer(session);
      await new Promise<void>((resolve) =>
        session.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      return EXIT.ok;
    } finally {
      server?.close();
      await session.close();
    }
  },
};

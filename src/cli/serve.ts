import { createServer, type Server } from 'node:http';
import { tokenText } from '../config/parsers.js';
import type { Store } from '../db/client.js';
import { openForServing } from '../db/readOnly.js';
import { sqliteReads } from '../db/reads.js';
import { safeMessage } from '../feed/errors.js';
import { databaseName, redactUrl } from '../feed/protocol/urls.js';
import type { ServiceInfo } from '../graphql/builder.js';
import { createApp } from '../http/app.js';
import { createPacketEvents, type PacketEvents, watchCompletedPackets } from '../ops/events.js';
import { createMetrics } from '../ops/metrics.js';
import { registerReadServerMetrics } from '../ops/readServerMetrics.js';
import type { CommandImplementation } from './command.js';
import { EXIT } from './exit.js';
import type { ServedPostgres } from './servePostgres.js';
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

/**
 * Listens on the configured address; resolves with GraphiQL's URL once it does. `demo`: the
 * served database holds the demo's data (`--demo`, or a PostgreSQL database a demo sync wrote).
 */
async function listen(server: Server, session: Session, demo: boolean): Promise<string> {
  const { config, logger } = session;
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
  /** Closes the server, every connection and (PostgreSQL) the pool. */
  close(): Promise<void>;
}

/** The database a server reads: a SQLite store, or a PostgreSQL pool's reads (no SQLite store). */
type ServedDatabase = { kind: 'sqlite'; store: Store } | ({ kind: 'postgres' } & ServedPostgres);

/**
 * Opens the session's database for serving: SQLite through `openForServing` (read-only on a
 * read-only mount), PostgreSQL through cli/servePostgres.ts (loaded only then).
 */
async function openServed(session: Session): Promise<ServedDatabase> {
  const { logger, database } = session;
  if (database.kind === 'postgres') {
    const { openServedPostgres } = await import('./servePostgres.js');
    return { kind: 'postgres', ...(await openServedPostgres(database, logger)) };
  }
  const dbPath = sqliteDatabase(database).path;
  // `start` too: the serving connection gets the larger page cache (db/client.ts, SERVING_CACHE_BYTES).
  const store = session.adopt(openForServing(dbPath));
  if (store.readOnly)
    logger.warn(
      { event: 'read-only', db: dbPath, reason: store.readOnly },
      `serving ${dbPath} read-only: ${store.readOnly}`,
    );
  return { kind: 'sqlite', store };
}

/**
 * The packet watch of a `serve` process (no sync in it; `start` publishes from its own sync): how
 * subscriptions learn of packets a sync in another process completed. SQLite polls the file
 * (ops/events.ts `watchCompletedPackets`); PostgreSQL listens for the writer's `NOTIFY`
 * (db/postgres/listen.ts `watchPostgresPackets`).
 */
function startPacketWatch(session: Session, served: ServedDatabase, events: PacketEvents): void {
  if (session.mode !== 'serve') return;
  if (served.kind === 'postgres') {
    served.watch(events, session.signal);
    return;
  }
  const onError = (error: unknown) =>
    session.logger.warn(
      { event: 'watch-failed', err: safeMessage(error) },
      'cannot check for synced packets',
    );
  watchCompletedPackets(served.store, events, { signal: session.signal, onError });
}

/**
 * `serve` over a database no sync has stored a packet in (a first sync that failed leaves one):
 * it serves, since a sync in another process may be filling it, but says why every answer is empty.
 */
async function warnWhenEmpty(session: Session, served: ServedDatabase): Promise<void> {
  if (session.mode !== 'serve') return;
  const reads = served.kind === 'sqlite' ? sqliteReads(served.store) : served.reads;
  if ((await reads.packetPosition()).highest !== null) return;
  session.logger.warn(
    { event: 'empty-database' },
    'the database holds no packet yet: GraphQL answers empty until a sync stores one ' +
      '(run `livefeed sync`, or `livefeed start` for both; README, Quick start)',
  );
}

/**
 * Warns (never showing a token) when a mirror token has not upstream's shape: the mirror accepts it,
 * but another livefeed refuses it as its LIVEFEED_TOKEN (README, File links and mirror).
 */
function warnOddMirrorTokens(session: Session): void {
  const odd = session.config.mirrorTokens.flatMap((token, i) =>
    tokenText.safeParse(token).success ? [] : [i + 1],
  );
  if (odd.length === 0) return;
  session.logger.warn(
    { event: 'mirror-token-shape', tokens: odd },
    `mirror token${odd.length > 1 ? 's' : ''} ${odd.join(', ')} of LIVEFEED_MIRROR_TOKENS ${odd.length > 1 ? 'are' : 'is'} not 40 characters of [A-Za-z0-9]: tools accept ${odd.length > 1 ? 'them' : 'it'}, but another livefeed cannot use ${odd.length > 1 ? 'them' : 'it'} as its LIVEFEED_TOKEN (README, File links and mirror)`,
  );
}

/**
 * Serves GraphQL and the HTTP routes from the session's database, SQLite or PostgreSQL. `serve`
 * only reads: a SQLite file it cannot write (read-only mount) is opened read-only, and with no sync
 * in the process subscriptions learn of completed packets from the database ({@link startPacketWatch}).
 * @throws Error naming the database when it cannot be opened, or the address when it cannot listen.
 */
export async function startServer(session: Session): Promise<RunningServer> {
  const served = await openServed(session);
  const closeServed = async () => {
    if (served.kind === 'postgres') await served.close();
  };
  try {
    return await serveDatabase(session, served, closeServed);
  } catch (error) {
    await closeServed();
    throw error;
  }
}

async function serveDatabase(
  session: Session,
  served: ServedDatabase,
  closeServed: () => Promise<void>,
): Promise<RunningServer> {
  const { config, logger, ops } = session;
  const service = serviceInfo(session);
  // A serving session has both (cli/session.ts); made here too so that the types say so.
  const metrics = ops.metrics ?? createMetrics();
  if (served.kind === 'postgres' && !service.demo && (await served.reads.demo())) {
    // A database a demo sync wrote: say so, as `serve --demo` does for the SQLite demo file.
    service.demo = true;
    metrics.setInfo({ version: VERSION, deployment: config.deployment, demo: true });
  }
  const events = ops.events ?? createPacketEvents();
  // Without --db-replica every read goes to the one server: no per-server lines to show.
  if (served.kind === 'postgres' && session.config.dbReplicas.length > 0)
    registerReadServerMetrics(metrics.registry, served.servers, served.replayLags);
  const app = createApp({
    ...(served.kind === 'sqlite'
      ? { store: served.store }
      : { reads: served.reads, readsForRequest: served.readsForRequest, display: served.display }),
    service,
    logger,
    dataDir: config.dataDir,
    corsOrigins: config.corsOrigins,
    mirrorTokens: config.mirrorTokens,
    upstream: upstreamClient(config, session.target, logger),
    metrics,
    events,
    freshness: { warningMs: config.freshnessWarningMs, criticalMs: config.freshnessCriticalMs },
  });
  startPacketWatch(session, served, events);
  await warnWhenEmpty(session, served);
  warnOddMirrorTokens(session);
  const server = createServer(app.handle);
  const close = async () => {
    server.closeAllConnections();
    server.close();
    await closeServed();
  };
  try {
    return { url: await listen(server, session, service.demo), close };
  } catch (error) {
    server.closeAllConnections();
    server.close();
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
      await server?.close();
      await session.close();
    }
  },
};

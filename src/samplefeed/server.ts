import { once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { DUMPS_URL_PATH } from '../feed/fullDumps.js';
import {
  ERROR_BODIES,
  METHOD_NOT_ALLOWED_HTML,
  missingFileBody,
  NOT_FOUND_HTML,
  replicationInfoBody,
} from '../feed/protocol/bodies.js';
import { type FileRoute, matchRoute } from '../feed/protocol/routes.js';
import { type OpenFeedFile, openFeedFile, resolveInside } from '../files/local.js';
import { sendFile as sendFileBody } from '../http/fileBody.js';
import { SAMPLE_TOKEN } from './bundled.js';
import { answerFault, FaultPlan, withBodyFault } from './faults.js';
import { answerFullDump } from './fullDumps.js';
import { findLastPacket } from './lastPacket.js';

/** The bundled feed's token and folder (in bundled.ts, which the CLI loads without this server). */
export { BUNDLED_FEED_ROOT, SAMPLE_TOKEN } from './bundled.js';

/** What the sample feed serves and to whom. */
export interface SampleFeedOptions {
  /**
   * Folder laid out like upstream's feed root: `replication-<N>-v2.tar.bz2` and/or
   * `replication-<N>.tar.bz2`, `json-dumps/json-dump-<N>/<entity>.tar.xz`, each optionally with `.asc`.
   * Read on every request, so files may be added while the server runs.
   */
  root: string;
  /** Database path segment: URLs are `/api/<database>/...`. Default `musicbrainz`. */
  database?: string;
  /** Tokens accepted in the `token` query parameter. Default `[SAMPLE_TOKEN]`. */
  tokens?: readonly string[];
  /** Faults to inject (tests); default an empty plan, reachable as `faults` on the handler and feed. */
  faults?: FaultPlan;
}

/** One answered request. `path` never carries the query string, so the token is never kept. */
export interface SampleFeedRequest {
  method: string;
  path: string;
  status: number;
}

/** A request handler of the sample feed with its request log (appended as each response starts). */
export type SampleFeedHandler = ((req: IncomingMessage, res: ServerResponse) => void) & {
  requests: SampleFeedRequest[];
  faults: FaultPlan;
};

/** A running sample feed. */
export interface SampleFeed {
  /** Feed root URL, e.g. `http://127.0.0.1:PORT/api/musicbrainz` (no trailing slash). */
  feedRoot: string;
  /** Full JSON dump directory (`--dumps-url`), e.g. `http://127.0.0.1:PORT/pub/musicbrainz/data/json-dumps`. */
  dumpsUrl: string;
  /** Every request answered so far, in order. */
  requests: SampleFeedRequest[];
  /** Faults injected into later requests (src/samplefeed/faults.ts). */
  faults: FaultPlan;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
  server: Server;
}

const TOKEN_SHAPE = /^[A-Za-z0-9]{40}$/;
const DATABASE_SHAPE = /^[A-Za-z0-9_.-]+$/;

const CONTENT_TYPES = {
  'replication-packet': 'application/x-bzip2',
  'json-dump': 'application/x-xz',
  signature: 'application/pgp-signature',
} as const;

interface Context {
  root: string;
  database: string;
  tokens: ReadonlySet<string>;
  requests: SampleFeedRequest[];
  faults: FaultPlan;
}

/**
 * Builds the request handler of a sample feed over `options.root`: upstream's five endpoints with
 * its status codes and bodies (FEED.md, Errors, checked in the order route → token present → token
 * valid → file exists), Range and HEAD support, files streamed from disk. Mount it on any Node HTTP
 * server; {@link startSampleFeed} does that on a loopback port.
 * @throws Error when `database` is not a single path segment or a token lacks upstream's shape.
 */
export function createSampleFeedHandler(options: SampleFeedOptions): SampleFeedHandler {
  const database = options.database ?? 'musicbrainz';
  if (!DATABASE_SHAPE.test(database) || database === '.' || database === '..') {
    throw new Error(
      `sample feed: database must be one path segment of [A-Za-z0-9_.-], got ${JSON.stringify(database)}`,
    );
  }
  const tokens = options.tokens ?? [SAMPLE_TOKEN];
  // Reported by position, never by value: a token must not reach an error message.
  const badToken = tokens.findIndex((token) => !TOKEN_SHAPE.test(token));
  if (badToken >= 0)
    throw new Error(`sample feed: token #${badToken + 1} is not 40 characters of [A-Za-z0-9]`);

  const faults = options.faults ?? new FaultPlan();
  const context: Context = { root: options.root, database, tokens: new Set(tokens), requests: [], faults };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    handle(context, req, res).catch((error: unknown) => failed(context, req, res, error));
  };
  return Object.assign(handler, { requests: context.requests, faults });
}

/**
 * Starts a sample feed on `host` (default 127.0.0.1) and `port` (default 0: any free port).
 * @throws the listen error (e.g. EADDRINUSE) and the errors of {@link createSampleFeedHandler}.
 */
export async function startSampleFeed(
  options: SampleFeedOptions & { host?: string; port?: number },
): Promise<SampleFeed> {
  const handler = createSampleFeedHandler(options);
  const server = createServer(handler);
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    feedRoot: `http://${host}:${address.port}/api/${options.database ?? 'musicbrainz'}`,
    dumpsUrl: `http://${host}:${address.port}${DUMPS_URL_PATH}`,
    requests: handler.requests,
    faults: handler.faults,
    server,
    async close() {
      const closed = new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
      // Keep-alive connections would otherwise hold close() open until they time out.
      server.closeAllConnections();
      await closed;
    },
  };
}

async function handle(context: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = pathOf(url);
  const reply = responder(context, req, res, path);
  const log = (status: number) => record(context, req, path, status);
  if (await answerFullDump(context.root, path, req, res, log, context.faults)) return;

  const route = matchRoute(path, context.database);
  if (!route) return reply(404, { 'content-type': 'text/html; charset=utf-8' }, NOT_FOUND_HTML);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return reply(
      405,
      { 'content-type': 'text/html; charset=utf-8', allow: 'GET, HEAD' },
      METHOD_NOT_ALLOWED_HTML,
    );
  }

  // Fault injection (faults.ts): after routing, before the token checks, like a faulty proxy.
  const fault = context.faults.take(route.kind === 'file' ? route.path : 'replication-info');
  if (fault && answerFault(fault, req, res, (status) => record(context, req, path, status))) return;

  const token = new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1)).get('token');
  if (!token) return reply(400, TEXT, ERROR_BODIES.noToken);
  if (!context.tokens.has(token)) return reply(403, TEXT, ERROR_BODIES.invalidToken);

  if (route.kind === 'replication-info') {
    const body = replicationInfoBody(await findLastPacket(context.root));
    return reply(200, { 'content-type': 'application/json' }, body);
  }
  const file = await openFeedFile(resolveInside(context.root, route.path));
  if (!file) return reply(404, TEXT, missingFileBody(route));
  const served = fault ? withBodyFault(file, fault) : file;
  await sendFile(req, res, served, route, (status) => record(context, req, path, status));
}

/** The request path without its query string: what the log keeps (the token is in the query). */
function pathOf(url: string): string {
  const queryAt = url.indexOf('?');
  return queryAt < 0 ? url : url.slice(0, queryAt);
}

const TEXT: OutgoingHttpHeaders = { 'content-type': 'text/plain; charset=utf-8' };

type Reply = (status: number, headers: OutgoingHttpHeaders, body: string) => void;

/** Sends a whole small body (none for HEAD) and logs the request. */
function responder(context: Context, req: IncomingMessage, res: ServerResponse, path: string): Reply {
  return (status, headers, body) => {
    record(context, req, path, status);
    res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

function record(context: Context, req: IncomingMessage, path: string, status: number): void {
  context.requests.push({ method: req.method ?? 'GET', path, status });
}

/** Streams `file` (or the requested byte range of it) as the answer to `route`; closes the file. */
async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: OpenFeedFile,
  route: FileRoute,
  log: (status: number) => void,
): Promise<void> {
  const contentType = route.signature ? CONTENT_TYPES.signature : CONTENT_TYPES[route.file];
  await sendFileBody(req, res, file, { contentType, onStatus: log });
}

function failed(context: Context, req: IncomingMessage, res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy(error instanceof Error ? error : undefined);
    return;
  }
  record(context, req, pathOf(req.url ?? '/'), 500);
  // The sample feed has no logger of its own: the cause goes to the client, which reports it.
  const body = `Internal Server Error: ${error instanceof Error ? error.message : String(error)}\n`;
  res.writeHead(500, { ...TEXT, 'content-length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

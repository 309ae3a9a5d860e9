import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Reads } from '../db/reads.js';
import { serverUnavailable } from '../db/unavailable.js';
import {
  ERROR_BODIES,
  METHOD_NOT_ALLOWED_HTML,
  missingFileBody,
  NOT_FOUND_HTML,
  replicationInfoBody,
} from '../feed/protocol/bodies.js';
import { type FeedRoute, type FileRoute, matchRoute } from '../feed/protocol/routes.js';
import { clientGoneSignal, feedContentType, sendFile, sendText } from './fileBody.js';
import { type FileSource, type FoundFile, goneText } from './fileSource.js';
import type { Route } from './route.js';
import { tokenChecker } from './tokens.js';

/** What the mirror serves and to whom. */
export interface MirrorOptions {
  /** The store's reads (SQLite or PostgreSQL): the position and the records of files not held. */
  reads: MirrorReads;
  source: FileSource;
  /** Path segment of the feed root (`ServiceInfo.database`): paths are `/api/<database>/...`. */
  database: string;
  /** Tokens accepted in `?token=`; empty: the mirror is open (issue 4, Mirror endpoints). */
  tokens: readonly string[];
  /** Told of a database that did not answer before an answer started (it then answers 503). */
  onError?: (error: unknown) => void;
}

/** The reads the mirror answers from. */
export type MirrorReads = Pick<
  Reads,
  | 'latestPacket'
  | 'packetPosition'
  | 'jsonDumpState'
  | 'replicationPacketRow'
  | 'historyFrom'
  | 'bootstrapState'
>;

const TEXT = { 'content-type': 'text/plain; charset=utf-8' } as const;
const HTML = { 'content-type': 'text/html; charset=utf-8' } as const;
/** Seconds a client waits before asking again for a file this instance's sync is still after. */
export const MIRROR_RETRY_AFTER_S = 60;

/**
 * Upstream's feed endpoints served from the local store under `/api/<database>/` (FEED.md,
 * Deployments and URLs, rows 1–5), so tools that replicate from upstream, and other livefeed
 * instances, can use this instance as their feed root:
 * - `replication-info`: `{"last_packet": "replication-N.tar.bz2"}` with N the newest packet held
 *   here completely with every earlier one (so a downstream never sees a half-stored hour), or null;
 * - `replication-N[-v2].tar.bz2[.asc]`, `json-dumps/json-dump-N/<entity>.tar.xz[.asc]`: the exact
 *   bytes of stored files (see {@link FileSource}; Range, HEAD, ETag).
 *
 * Errors as upstream (FEED.md, Errors), checked in its order route → token present → token valid →
 * file exists: HTML 404 for an unknown path, 405 for methods other than GET/HEAD, 400
 * `You need to provide an access token!` / 403 `Provided access token is invalid!` when tokens are
 * configured. A file not served gets upstream's 404 and body only where this instance's records say
 * upstream has none (see {@link recordOf}): a downstream livefeed settles a JSON dump's 404 as "no
 * changes" once it has seen a later dump (FEED.md, Errors), so a 404 for a file that exists upstream
 * would lose an hour there. Otherwise 410 (not obtainable here), 503 with Retry-After (this
 * instance's sync is still asking the feed) or 502 (the feed did not deliver a file no longer kept),
 * which a livefeed records as a failed file and asks again. Requests outside `/api/<database>/` are
 * left to other routes.
 */
export function mirrorRoute(options: MirrorOptions): Route {
  const prefix = `/api/${options.database}/`;
  const checkToken = tokenChecker(options.tokens);
  return {
    async handle(req, res, url) {
      if (!url.pathname.startsWith(prefix)) return false;
      const raw = req.url ?? '/';
      const queryAt = raw.indexOf('?');
      const route = matchRoute(queryAt < 0 ? raw : raw.slice(0, queryAt), options.database);
      if (!route) {
        sendText(req, res, 404, HTML, NOT_FOUND_HTML);
        return true;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendText(req, res, 405, { ...HTML, allow: 'GET, HEAD' }, METHOD_NOT_ALLOWED_HTML);
        return true;
      }
      const verdict = checkToken(url.searchParams.get('token'));
      if (verdict !== 'ok') {
        const [status, body] =
          verdict === 'missing' ? [400, ERROR_BODIES.noToken] : [403, ERROR_BODIES.invalidToken];
        sendText(req, res, status, TEXT, body);
        return true;
      }
      try {
        await serveRoute(req, res, route, options);
      } catch (error) {
        if (res.headersSent || !serverUnavailable(error)) throw error;
        options.onError?.(error);
        // The database does not answer (a PostgreSQL server restarting): a livefeed reading this
        // mirror takes a 503 as a file to ask for again, never as a missing one.
        const path = route.kind === 'replication-info' ? 'replication-info' : route.path;
        const body = `${path} cannot be answered now: this server's database does not answer; ask again later.\n`;
        sendText(req, res, 503, { ...TEXT, 'retry-after': String(MIRROR_RETRY_AFTER_S) }, body);
      }
      return true;
    },
  };
}

/** Answers `route` (its token checked) from the database and the files. */
async function serveRoute(
  req: IncomingMessage,
  res: ServerResponse,
  route: FeedRoute,
  options: MirrorOptions,
): Promise<void> {
  if (route.kind === 'replication-info') {
    const latest = (await options.reads.latestPacket())?.number ?? null;
    const body = replicationInfoBody(
      latest,
      latest === null ? undefined : await firstServed(options.reads, latest),
    );
    sendText(req, res, 200, { 'content-type': 'application/json' }, body);
    return;
  }
  const found = await options.source.find(route.path, clientGoneSignal(res));
  if (found.kind !== 'file') {
    const answer = await notServed(options.reads, route, found);
    sendText(req, res, answer.status, { ...TEXT, ...answer.headers }, answer.body);
    return;
  }
  await sendFile(req, res, found.file, { contentType: feedContentType(route.path), etag: found.etag });
}

/**
 * The `history_from` of `replication-info`: the first packet whose files a livefeed syncing from here
 * can ask for. That is the oldest packet held, or the one after a bootstrap's full dumps, whose own
 * packet holds no files. Undefined when it lies past `latest`: a pruning cutoff counted from a
 * packet stored but not complete yet. A downstream then starts as it would from upstream.
 */
async function firstServed(reads: MirrorReads, latest: number): Promise<number | undefined> {
  const held = await reads.historyFrom();
  const bootstrap = (await reads.bootstrapState()).position?.packet;
  const first = bootstrap === undefined ? held : Math.max(held ?? 0, bootstrap + 1);
  return first !== undefined && first <= latest ? first : undefined;
}

/** The answer for a file not served. */
interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** What a file not held here is, by this instance's records ({@link recordOf}). */
type NotHeld = 'absent-upstream' | 'waiting' | 'not-synced';

/** The status, body and headers for a file of `route` that `find` did not give (see {@link mirrorRoute}). */
async function notServed(
  reads: MirrorReads,
  route: FileRoute,
  found: Exclude<FoundFile, { kind: 'file' }>,
): Promise<Answer> {
  if (found.kind === 'unavailable')
    return { status: 502, body: 'The file is not kept here and the upstream feed did not deliver it.\n' };
  if (found.kind === 'gone') return { status: 410, body: goneText({ ...found, name: route.path }) };
  // The signature of a stored archive that the feed had none for: upstream's own 404.
  const record = found.row ? 'absent-upstream' : await recordOf(reads, route);
  switch (record) {
    case 'absent-upstream':
      return { status: 404, body: missingFileBody(route) };
    case 'waiting':
      return {
        status: 503,
        body: `${route.path} is not here yet: this server's sync is still asking the feed for it.\n`,
        headers: { 'retry-after': String(MIRROR_RETRY_AFTER_S) },
      };
    case 'not-synced':
      return { status: 410, body: await notSyncedBody(reads, route) };
  }
}

/**
 * The 410 body of a file this server did not sync. Before the first packet it holds, the body says
 * where its packets start: a new database syncing from here starts there (`history_from` in
 * `replication-info`), but an explicit `--from` or an older database may ask for earlier packets
 * (README, File links and mirror).
 */
async function notSyncedBody(reads: MirrorReads, route: FileRoute): Promise<string> {
  const from = await reads.historyFrom();
  if (from !== undefined && route.packet < from)
    return `${route.path} is not available here: this server holds packets from ${from} on (a livefeed syncing from it: sync --from ${from}).\n`;
  return `${route.path} is not available here: this server did not sync it (entity type, packet or file not synced).\n`;
}

/**
 * What the records say of a file of `route` that has no `feed_files` row:
 * - `absent-upstream` (upstream's 404): the packet is above every packet synced here (not made yet,
 *   as far as this instance knows; no later file is served here either, so a downstream cannot
 *   settle on it), a JSON dump recorded NO_CHANGES, a replication packet upstream answered 404 for
 *   (PENDING, MISSING);
 * - `waiting` (503): a JSON dump PENDING or FAILED, a replication packet FAILED: the sync asks again;
 * - `not-synced` (410): anything else at or below the highest packet synced here: an entity type not
 *   tracked (`--entities`), replication packets not synced, the other replication file name (`-v2`
 *   or not), a packet before the first synced or skipped, a JSON dump imported from a local file.
 */
async function recordOf(reads: MirrorReads, route: FileRoute): Promise<NotHeld> {
  const { highest } = await reads.packetPosition();
  if (highest === null || route.packet > highest) return 'absent-upstream';
  if (route.entity) {
    const status = (await reads.jsonDumpState(route.packet, route.entity))?.status;
    if (status === 'NO_CHANGES') return 'absent-upstream';
    return status === 'PENDING' || status === 'FAILED' ? 'waiting' : 'not-synced';
  }
  const packet = await reads.replicationPacketRow(route.packet);
  if (!packet || (packet.fileName !== null && packet.fileName !== route.archivePath)) return 'not-synced';
  if (packet.status === 'PENDING' || packet.status === 'MISSING') return 'absent-upstream';
  return packet.status === 'FAILED' ? 'waiting' : 'not-synced';
}

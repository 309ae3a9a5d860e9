import type { Reads } from '../db/reads.js';
import {
  ERROR_BODIES,
  METHOD_NOT_ALLOWED_HTML,
  missingFileBody,
  NOT_FOUND_HTML,
  replicationInfoBody,
} from '../feed/protocol/bodies.js';
import { matchRoute } from '../feed/protocol/routes.js';
import { clientGoneSignal, feedContentType, sendFile, sendText } from './fileBody.js';
import type { FileSource } from './fileSource.js';
import type { Route } from './route.js';
import { tokenChecker } from './tokens.js';

/** What the mirror serves and to whom. */
export interface MirrorOptions {
  /** The store's reads (SQLite or PostgreSQL). */
  reads: Pick<Reads, 'latestPacket'>;
  source: FileSource;
  /** Path segment of the feed root (`ServiceInfo.database`): paths are `/api/<database>/...`. */
  database: string;
  /** Tokens accepted in `?token=`; empty: the mirror is open (issue 4, Mirror endpoints). */
  tokens: readonly string[];
}

const TEXT = { 'content-type': 'text/plain; charset=utf-8' } as const;
const HTML = { 'content-type': 'text/html; charset=utf-8' } as const;

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
 * configured, 404 with upstream's bodies for files not held. 502 when a file no longer kept here
 * could not be fetched from the feed. Requests outside `/api/<database>/` are left to other routes.
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
      if (route.kind === 'replication-info') {
        const body = replicationInfoBody((await options.reads.latestPacket())?.number ?? null);
        sendText(req, res, 200, { 'content-type': 'application/json' }, body);
        return true;
      }
      const found = await options.source.find(route.path, clientGoneSignal(res));
      if (found.kind === 'unknown' || found.kind === 'gone') {
        sendText(req, res, 404, TEXT, missingFileBody(route));
        return true;
      }
      if (found.kind === 'unavailable') {
        sendText(
          req,
          res,
          502,
          TEXT,
          'The file is not kept here and the upstream feed did not deliver it.\n',
        );
        return true;
      }
      await sendFile(req, res, found.file, { contentType: feedContentType(route.path), etag: found.etag });
      return true;
    },
  };
}

import { basename } from 'node:path';
import { clientGoneSignal, feedContentType, sendFile, sendText } from './fileBody.js';
import { type FileSource, goneText } from './fileSource.js';
import type { Route } from './route.js';

/** Path prefix of the file links (`FeedFile.url`, `FeedFile.signatureUrl`; graphql/types/feedFile.ts). */
export const FILES_PREFIX = '/files/';

const TEXT = { 'content-type': 'text/plain; charset=utf-8' } as const;

/**
 * `GET|HEAD /files/<name>` and `/files/<name>.asc`, `<name>` a path under the feed root recorded in
 * `feed_files` (issue 4, Files and links): the exact bytes the feed served, with
 * `application/x-xz`, `application/x-bzip2` or `application/pgp-signature`, Range (206/416), HEAD,
 * `ETag` = quoted SHA-256 (If-None-Match → 304). Archives no longer kept locally are fetched from
 * the feed on demand (the token is added server side and never reaches the client).
 *
 * Answers: 404 for a name this instance never stored, 410 Gone when it is no longer kept and there is
 * no upstream access (or the feed no longer has it), 502 when the feed failed to deliver it, 405
 * for other methods. Bodies are short `text/plain` and never echo the request.
 */
export function filesRoute(source: FileSource): Route {
  return {
    async handle(req, res, url) {
      // The raw path, not the parsed URL: `..` must not be resolved into some other recorded name.
      const raw = (req.url ?? '/').split('?')[0]!;
      if (!url.pathname.startsWith(FILES_PREFIX) && !raw.startsWith(FILES_PREFIX)) return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendText(req, res, 405, { ...TEXT, allow: 'GET, HEAD' }, 'Only GET and HEAD are allowed here.\n');
        return true;
      }
      const name = raw.startsWith(FILES_PREFIX) ? feedName(raw.slice(FILES_PREFIX.length)) : undefined;
      const found =
        name === undefined ? ({ kind: 'unknown' } as const) : await source.find(name, clientGoneSignal(res));
      switch (found.kind) {
        case 'unknown':
          sendText(req, res, 404, TEXT, 'No such feed file on this server.\n');
          return true;
        case 'gone':
          sendText(req, res, 410, TEXT, goneText(found));
          return true;
        case 'unavailable':
          sendText(
            req,
            res,
            502,
            TEXT,
            `${found.name} is not kept on this server and the feed did not deliver it; try again later.\n`,
          );
          return true;
      }
      await sendFile(req, res, found.file, {
        contentType: feedContentType(found.name),
        etag: found.etag,
        headers: {
          'content-disposition': `attachment; filename="${basename(found.name)}"`,
          'x-content-type-options': 'nosniff',
        },
      });
      return true;
    },
  };
}

/**
 * The feed path of a link, percent-decoded once; undefined when it does not decode, holds NUL or a
 * backslash, or has empty, `.` or `..` segments (feed paths never do).
 */
function feedName(raw: string): string | undefined {
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  if (name.includes('\0') || name.includes('\\')) return undefined;
  return name.split('/').some((s) => s === '' || s === '.' || s === '..') ? undefined : name;
}

import type { FileRoute } from './routes.js';

/**
 * Upstream's error bodies, byte for byte (FEED.md, Errors). They are `text/plain`; note that the
 * JSON dump body has no final newline, as upstream.
 */
export const ERROR_BODIES = {
  noToken: 'You need to provide an access token!\n',
  invalidToken: 'Provided access token is invalid!\n',
  packetMissing: "Can't find specified replication packet!\n",
  jsonDumpMissing: "Can't find specified JSON dump!",
} as const;

/**
 * Body of the 404 for a missing signature (FEED.md, Errors: `Can't find signature for ...`), naming
 * the feed-root-relative path of the archive the signature belongs to.
 */
export function signatureMissingBody(archivePath: string): string {
  return `Can't find signature for ${archivePath}`;
}

/** The 404 body for `route` when its file does not exist (FEED.md, Errors). */
export function missingFileBody(route: FileRoute): string {
  if (route.signature) return signatureMissingBody(route.archivePath);
  return route.file === 'json-dump' ? ERROR_BODIES.jsonDumpMissing : ERROR_BODIES.packetMissing;
}

/** `text/html` page for a path that matches no route (FEED.md, Errors: last row). */
export const NOT_FOUND_HTML =
  '<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n' +
  '<p>Nothing is served at this address.</p>\n';

/** `text/html` page for a route asked with a method other than GET or HEAD. */
export const METHOD_NOT_ALLOWED_HTML =
  '<!doctype html>\n<html lang=en>\n<title>405 Method Not Allowed</title>\n<h1>Method Not Allowed</h1>\n' +
  '<p>Only GET and HEAD are allowed here.</p>\n';

/**
 * Body of `replication-info` (FEED.md, replication-info): the plain, non-`-v2` file name of the latest
 * packet, or null. Compact JSON plus a newline, as upstream's JSON helper writes it. A livefeed
 * mirror adds `history_from` (a number, the oldest packet it holds), which upstream never sends:
 * a new database syncing from the mirror starts there rather than before it (README, File links
 * and mirror).
 */
export function replicationInfoBody(lastPacket: number | null, historyFrom?: number): string {
  const name = lastPacket === null ? null : `replication-${lastPacket}.tar.bz2`;
  const body =
    historyFrom === undefined ? { last_packet: name } : { last_packet: name, history_from: historyFrom };
  return `${JSON.stringify(body)}\n`;
}

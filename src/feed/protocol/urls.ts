import type { EntityType } from '../entities.js';

/** Which upstream deployment a feed root belongs to (FEED.md, Deployments and URLs). */
export type Deployment = 'production' | 'test';

/** Default feed root per deployment (FEED.md, Deployments and URLs). */
export const DEFAULT_FEED_ROOTS: Record<Deployment, string> = {
  production: 'https://metabrainz.org/api/musicbrainz',
  test: 'https://test.metabrainz.org/api/musicbrainz',
};

/**
 * The deployment whose host `feedRoot` is on (`metabrainz.org` production, `test.metabrainz.org`
 * test; FEED.md, Deployments and URLs); undefined for any other host (a mirror, the sample feed)
 * or a root that is not a URL.
 */
export function deploymentOfFeedRoot(feedRoot: string): Deployment | undefined {
  if (!URL.canParse(feedRoot)) return undefined;
  const host = new URL(feedRoot).host;
  return (Object.keys(DEFAULT_FEED_ROOTS) as Deployment[]).find(
    (deployment) => new URL(DEFAULT_FEED_ROOTS[deployment]).host === host,
  );
}

/**
 * File name of replication packet `packet`: `replication-N-v2.tar.bz2` on production,
 * `replication-N.tar.bz2` on the test deployment (FEED.md, Deployments and URLs).
 */
export function replicationPacketName(packet: number, deployment: Deployment): string {
  return deployment === 'production' ? `replication-${packet}-v2.tar.bz2` : `replication-${packet}.tar.bz2`;
}

/** Path under the feed root of the JSON dump of `entity` for packet `packet`, without a leading slash. */
export function jsonDumpPath(packet: number, entity: EntityType): string {
  return `json-dumps/json-dump-${packet}/${entity}.tar.xz`;
}

/** Path of the detached signature of a feed file: the file's path plus `.asc`. */
export function signaturePath(path: string): string {
  return `${path}.asc`;
}

/** The database name of a feed root: its last path segment (`musicbrainz`). */
export function databaseName(feedRoot: string): string {
  const segments = new URL(feedRoot).pathname.split('/').filter(Boolean);
  return segments.at(-1) ?? 'musicbrainz';
}

/**
 * Absolute URL of `path` under `feedRoot`, with `token` as the `token` query parameter when given.
 * The result holds the token: pass it only to the HTTP client, never to a log or a client
 * (print {@link redactUrl} of it instead).
 */
export function feedUrl(feedRoot: string, path: string, token?: string): URL {
  const base = feedRoot.endsWith('/') ? feedRoot : `${feedRoot}/`;
  const url = new URL(path.replace(/^\/+/, ''), base);
  if (token) url.searchParams.set('token', token);
  return url;
}

/** `url` as text with any `token` query parameter replaced by `***`, safe to log or show. */
export function redactUrl(url: URL | string): string {
  const copy = new URL(url.toString());
  if (copy.searchParams.has('token')) copy.searchParams.set('token', '***');
  return copy.toString().replace('token=%2A%2A%2A', 'token=***');
}

const INFO_NAME = /^replication-(\d+)(?:-v2)?\.tar\.bz2$/;

/**
 * Parses the body of `replication-info` (FEED.md, replication-info):
 * `{"last_packet": "replication-186123.tar.bz2"}` → 186123; `{"last_packet": null}` → null.
 * @throws Error quoting the body when it has another shape.
 */
export function parseReplicationInfo(body: unknown): number | null {
  const last = (body as { last_packet?: unknown } | null)?.last_packet;
  if (last === null) return null;
  if (typeof last === 'string') {
    const match = INFO_NAME.exec(last);
    if (match) return Number(match[1]);
  }
  throw new Error(`replication-info: unexpected body ${JSON.stringify(body)?.slice(0, 200)}`);
}

/**
 * The feed's `replication-info`: `latest` the latest packet (null when none); `historyFrom` the
 * oldest packet held, sent only by a livefeed mirror (src/feed/protocol/bodies.ts).
 */
export interface FeedInfo {
  latest: number | null;
  historyFrom?: number | undefined;
}

/**
 * Parses `replication-info` ({@link parseReplicationInfo}) with a livefeed mirror's `history_from`.
 * @throws Error quoting the body when it has another shape or `history_from` is not a positive integer.
 */
export function parseFeedInfo(body: unknown): FeedInfo {
  return { latest: parseReplicationInfo(body), historyFrom: parseHistoryFrom(body) };
}

function parseHistoryFrom(body: unknown): number | undefined {
  const from = (body as { history_from?: unknown } | null)?.history_from;
  if (from === undefined) return undefined;
  if (typeof from === 'number' && Number.isSafeInteger(from) && from > 0) return from;
  throw new Error(`replication-info: unexpected history_from in ${JSON.stringify(body)?.slice(0, 200)}`);
}

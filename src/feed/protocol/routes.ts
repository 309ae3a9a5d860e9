import { type EntityType, isEntityType } from '../entities.js';
import { jsonDumpPath, signaturePath } from './urls.js';

/** The kinds of archive the feed serves (FEED.md, Deployments and URLs, rows 1, 2, 4, 5). */
export type FeedFileKind = 'replication-packet' | 'json-dump';

/** A request path that names one of the feed's files. */
export interface FileRoute {
  kind: 'file';
  file: FeedFileKind;
  packet: number;
  /** Set for JSON dumps only. */
  entity?: EntityType;
  /** Feed-root-relative POSIX path of the file asked for, e.g. `json-dumps/json-dump-7/area.tar.xz.asc`. */
  path: string;
  /** Feed-root-relative path of the archive itself (without `.asc`). */
  archivePath: string;
  /** True when the detached signature (`.asc`) was asked for. */
  signature: boolean;
}

/**
 * A matched route of upstream's URL space, as the sample feed and the mirror serve it (FEED.md,
 * Deployments and URLs, rows 1–5).
 */
export type FeedRoute = { kind: 'replication-info' } | FileRoute;

const PACKET_FILE = /^replication-(\d+)(-v2)?\.tar\.bz2(\.asc)?$/;
const JSON_DUMP_FILE = /^json-dumps\/json-dump-(\d+)\/([a-z-]+)\.tar\.xz(\.asc)?$/;

/**
 * Matches a raw request path (no query string) against upstream's routes under `/api/<database>/`.
 * Returns undefined for anything else, which the server answers with its HTML 404 page.
 *
 * The path is percent-decoded once, as upstream's framework does; paths that do not decode, that hold
 * NUL or backslashes, or that have empty, `.` or `..` segments never match, and the route patterns
 * allow only digits and the eleven entity names in variable parts, so a match cannot leave the feed
 * root. Packet numbers are normalized (`007` → `7`) like upstream's integer URL converter.
 */
export function matchRoute(rawPath: string, database: string): FeedRoute | undefined {
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  if (path.includes('\0') || path.includes('\\')) return undefined;
  const prefix = `/api/${database}/`;
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length);
  if (rest.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    return undefined;

  if (rest === 'replication-info') return { kind: 'replication-info' };

  const packetMatch = PACKET_FILE.exec(rest);
  if (packetMatch) {
    const packet = packetNumber(packetMatch[1]!);
    if (packet === undefined) return undefined;
    const archivePath = `replication-${packet}${packetMatch[2] ?? ''}.tar.bz2`;
    return fileRoute('replication-packet', packet, undefined, archivePath, packetMatch[3] !== undefined);
  }

  const dumpMatch = JSON_DUMP_FILE.exec(rest);
  if (dumpMatch) {
    const packet = packetNumber(dumpMatch[1]!);
    const entity = dumpMatch[2]!;
    if (packet === undefined || !isEntityType(entity)) return undefined;
    return fileRoute('json-dump', packet, entity, jsonDumpPath(packet, entity), dumpMatch[3] !== undefined);
  }
  return undefined;
}

function fileRoute(
  file: FeedFileKind,
  packet: number,
  entity: EntityType | undefined,
  archivePath: string,
  signature: boolean,
): FileRoute {
  const path = signature ? signaturePath(archivePath) : archivePath;
  return { kind: 'file', file, packet, ...(entity ? { entity } : {}), path, archivePath, signature };
}

function packetNumber(digits: string): number | undefined {
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : undefined;
}

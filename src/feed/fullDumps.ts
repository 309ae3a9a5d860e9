import type { EntityType } from './entities.js';
import { isEntityType } from './entities.js';

/**
 * Upstream's full JSON dumps (FEED.md, Full JSON dumps): public, no token, a directory per dump
 * (`<YYYYMMDD>-<NNN>/`), `LATEST` naming the newest, and in each directory `<entity>.tar.xz` with
 * its `.asc`, in the same archive format as the hourly JSON dumps.
 */

/** Upstream's full JSON dump directory (`--dumps-url` default). */
export const DEFAULT_DUMPS_URL = 'https://data.metabrainz.org/pub/musicbrainz/data/json-dumps';

/** Path of the full dump directory under a host's root, as upstream serves it (the sample feed too). */
export const DUMPS_URL_PATH = '/pub/musicbrainz/data/json-dumps';

const DUMP_NAME = /^\d{8}-\d{3}$/;

/** True when `name` is a full dump's directory name (`20260510-001`). */
export function isFullDumpName(name: string): boolean {
  return DUMP_NAME.test(name);
}

/**
 * The dump name in the body of `LATEST` (one line).
 * @throws Error quoting the body when it is not a dump name.
 */
export function parseLatest(body: string): string {
  const name = body.trim();
  if (!isFullDumpName(name)) {
    throw new Error(
      `LATEST of the full JSON dumps names no dump (expected YYYYMMDD-NNN): ${JSON.stringify(body.slice(0, 80))}`,
    );
  }
  return name;
}

/** Path of a full dump's archive of `entity`, relative to the dumps URL: `20260510-001/artist.tar.xz`. */
export function fullDumpArchivePath(dump: string, entity: EntityType): string {
  return `${dump}/${entity}.tar.xz`;
}

/** Name of a full dump directory's list of SHA-256 sums, signed like the archives (FEED.md, Full JSON dumps). */
export const SUMS_FILE = 'SHA256SUMS';

/** Path of a full dump's {@link SUMS_FILE}, relative to the dumps URL: `20260510-001/SHA256SUMS`. */
export function fullDumpSumsPath(dump: string): string {
  return `${dump}/${SUMS_FILE}`;
}

/**
 * The SHA-256 (lowercase hex) that a `SHA256SUMS` body lists for `file`, as `sha256sum` writes
 * it (`<hex>  <file>`, or `<hex> *<file>` in binary mode; a `./` before the name is allowed);
 * undefined when it lists no such file.
 */
export function listedSha256(body: string, file: string): string | undefined {
  for (const line of body.split('\n')) {
    const match = /^([0-9a-fA-F]{64}) [ *](?:\.\/)?(.+?)\r?$/.exec(line);
    if (match && match[2] === file) return match[1]!.toLowerCase();
  }
  return undefined;
}

/** A request path under {@link DUMPS_URL_PATH}: `LATEST`, one dump archive or its `SHA256SUMS` (or their `.asc`). */
export type FullDumpRoute =
  | { kind: 'latest' }
  | { kind: 'archive'; dump: string; entity: EntityType; signature: boolean }
  | { kind: 'sums'; dump: string; signature: boolean };

const ARCHIVE = /^(\d{8}-\d{3})\/([a-z-]+)\.tar\.xz(\.asc)?$/;
const SUMS = /^(\d{8}-\d{3})\/SHA256SUMS(\.asc)?$/;

/**
 * Matches the part of a request path after {@link DUMPS_URL_PATH}`/`; undefined for anything else.
 * Variable parts allow only digits and entity names, so a match cannot leave the dumps folder.
 */
export function matchFullDumpPath(rest: string): FullDumpRoute | undefined {
  if (rest === 'LATEST') return { kind: 'latest' };
  const sums = SUMS.exec(rest);
  if (sums) return { kind: 'sums', dump: sums[1]!, signature: sums[2] !== undefined };
  const match = ARCHIVE.exec(rest);
  if (!match || !isEntityType(match[2]!)) return undefined;
  return { kind: 'archive', dump: match[1]!, entity: match[2], signature: match[3] !== undefined };
}

import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EntityType } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { runPiped } from './processes.js';

export {
  createTestKeyHome,
  type SignOptions,
  signFile,
  signOtherBytes,
  TEST_KEY_FINGERPRINT,
  TEST_PUBLIC_KEY_FILE,
  TEST_SECRET_KEY_FILE,
  type TestKeyHome,
  verifyWithGpg,
} from './testKeys.js';

/**
 * Builders of real feed archives for tests and for `scripts/make-fixtures.ts`, made with the real
 * `tar`, `xz`, `bzip2` and `gpg` binaries (CONTRIBUTING.md: tests use real archives). Replication
 * packets are built in `replicationArchives.ts` on top of {@link writeTarArchive}.
 */

/** Default `TIMESTAMP` of built archives (FEED.md, JSON dump archives: PostgreSQL timestamptz text). */
export const DEFAULT_TIMESTAMP = '2026-05-11 21:14:26.878674+00';
/** Default `SCHEMA_SEQUENCE` (31 in 2026, FEED.md). */
export const DEFAULT_SCHEMA_SEQUENCE = 31;

/**
 * Members of a JSON dump before `mbdump/<ENTITY>`, in upstream's order (FEED.md, JSON dump archives);
 * `JSON_DUMPS_SCHEMA_NUMBER` follows the data.
 */
export const JSON_DUMP_HEADER_MEMBERS = [
  'TIMESTAMP',
  'COPYING',
  'README',
  'REPLICATION_SEQUENCE',
  'SCHEMA_SEQUENCE',
] as const;

/** Every member of the JSON dump of `entity` in upstream's order (FEED.md, JSON dump archives). */
export function jsonDumpMembers(entity: string): string[] {
  return [...JSON_DUMP_HEADER_MEMBERS, `mbdump/${entity}`, 'JSON_DUMPS_SCHEMA_NUMBER'];
}

/** Content of one archive member: text (written as UTF-8), bytes, or a (possibly async) stream of chunks. */
export type MemberContent =
  | string
  | Uint8Array
  | Iterable<string | Uint8Array>
  | AsyncIterable<string | Uint8Array>;

/** One regular file of a tar archive: relative POSIX path (no `./`, no `..`) and content. */
export interface TarMember {
  name: string;
  content: MemberContent;
}

/** Compressor applied to the tar stream: `xz` (JSON dumps) or `bzip2` (replication packets). */
export type Compression = 'xz' | 'bzip2';

/** How {@link writeTarArchive} builds an archive. */
export interface TarArchiveOptions {
  compression: Compression;
  /** Modification time of every member, in seconds since the epoch (fixed for reproducible bytes). */
  mtime: number;
}

/** An archive written to disk. */
export interface BuiltArchive {
  /** Absolute path of the archive file. */
  path: string;
  /** Size in bytes. */
  bytes: number;
}

/** A feed file written under a feed root. */
export interface BuiltFeedFile extends BuiltArchive {
  /** Feed-root-relative POSIX path, as in the URL, e.g. `json-dumps/json-dump-7/area.tar.xz`. */
  feedPath: string;
}

const COMPRESSORS: Record<Compression, { cmd: string; args: string[] }> = {
  // -T1: single-threaded xz, whose output does not depend on the machine (xz >= 5.6 defaults to threads).
  xz: { cmd: 'xz', args: ['-c', '-6', '-T1'] },
  bzip2: { cmd: 'bzip2', args: ['-c', '-9'] },
};

/**
 * Writes a compressed tar archive at `outPath` holding `members` in exactly the given order (the
 * member list is passed to tar, never sorted), with owner and group 0, mode 0644 and the fixed
 * `mtime`, so equal inputs give equal bytes. The archive appears atomically (written beside, then
 * renamed), so a feed server never serves half a file. Member contents are streamed to a staging
 * folder first, so very large members are fine.
 * @throws Error for a member name that is absolute, has `.`/`..`/empty segments or repeats, and the
 *   tar or compressor failure (command line and stderr).
 */
export async function writeTarArchive(
  outPath: string,
  members: readonly TarMember[],
  options: TarArchiveOptions,
): Promise<BuiltArchive> {
  checkMemberNames(outPath, members);
  const staging = await mkdtemp(join(tmpdir(), 'lf-tar-'));
  const partial = `${outPath}.partial-${process.pid}`;
  try {
    for (const member of members) await writeMember(join(staging, ...member.name.split('/')), member.content);
    await mkdir(dirname(outPath), { recursive: true });
    const tar = {
      cmd: 'tar',
      args: [
        '--create',
        '--file=-',
        '--format=gnu',
        '--owner=0',
        '--group=0',
        '--numeric-owner',
        `--mtime=@${Math.floor(options.mtime)}`,
        '--mode=u=rw,go=r',
        '--no-recursion',
        `--directory=${staging}`,
        '--',
        ...members.map((member) => member.name),
      ],
    };
    await runPiped(tar, COMPRESSORS[options.compression], partial);
    await rename(partial, outPath);
    return { path: outPath, bytes: (await stat(outPath)).size };
  } finally {
    await rm(partial, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
}

function checkMemberNames(outPath: string, members: readonly TarMember[]): void {
  const seen = new Set<string>();
  for (const { name } of members) {
    const segments = name.split('/');
    if (name.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..')) {
      throw new Error(
        `${outPath}: member name ${JSON.stringify(name)} must be a relative path without ./ or ..`,
      );
    }
    if (seen.has(name)) throw new Error(`${outPath}: member ${JSON.stringify(name)} given twice`);
    seen.add(name);
  }
}

async function writeMember(file: string, content: MemberContent): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  if (typeof content === 'string' || content instanceof Uint8Array) {
    await writeFile(file, content);
    return;
  }
  await pipeline(Readable.from(content), createWriteStream(file));
}

/** Options of {@link writeJsonDump}. Defaults describe a well-formed upstream JSON dump. */
export interface JsonDumpOptions {
  /** Packet number N: the folder `json-dump-N` and, by default, `REPLICATION_SEQUENCE`. */
  packet: number;
  entity: EntityType;
  /**
   * Lines of `mbdump/<entity>`, each written verbatim followed by `\n` (so raw U+2028, U+2029, U+0085
   * and `\r` stay inside lines). May be a generator or an async iterable for very large inputs.
   */
  lines: Iterable<string> | AsyncIterable<string>;
  /** `TIMESTAMP` content without the newline. Default {@link DEFAULT_TIMESTAMP}. */
  timestamp?: string;
  /** Default {@link DEFAULT_SCHEMA_SEQUENCE}. */
  schemaSequence?: number;
  /** `REPLICATION_SEQUENCE` value; default `packet` (set another to build a mismatching dump). */
  replicationSequence?: number;
  /** Default 1. */
  jsonDumpsSchemaNumber?: number;
  /**
   * Where `JSON_DUMPS_SCHEMA_NUMBER` stands: `after-data` (default, as the producer writes it) or
   * `before-data` (with the other small members), to test that readers accept both orders.
   */
  schemaNumberAt?: 'after-data' | 'before-data';
  /**
   * The standard members left after `omitMembers`, each named once, in the order to write them
   * (e.g. `['mbdump/area', 'REPLICATION_SEQUENCE', ...]`), to test that readers accept any order;
   * overrides `schemaNumberAt`. Default upstream's order.
   */
  memberOrder?: readonly string[];
  /** Members appended after `mbdump/<entity>`, in order. */
  extraMembers?: readonly TarMember[];
  /** Standard members to leave out, e.g. `['REPLICATION_SEQUENCE']` or `['mbdump/area']`. */
  omitMembers?: readonly string[];
  /** Member mtime in epoch seconds; default the instant of `timestamp` (or 0 if it does not parse). */
  mtime?: number;
}

const COPYING =
  'The data in this archive is MusicBrainz data, placed in the public domain under CC0 1.0:\n' +
  'https://creativecommons.org/publicdomain/zero/1.0/\n';
const README =
  'A MusicBrainz incremental JSON dump: one JSON object per line in mbdump/<entity>, the entities of\n' +
  'one type changed in the hour of the replication sequence in REPLICATION_SEQUENCE.\n' +
  'This copy was built by livefeed for tests and its demo feed; it is not an upstream file.\n';

/**
 * Writes `<root>/json-dumps/json-dump-<packet>/<entity>.tar.xz` with upstream's members and order
 * (FEED.md, JSON dump archives): `TIMESTAMP`, `COPYING`, `README`, `REPLICATION_SEQUENCE`,
 * `SCHEMA_SEQUENCE`, `mbdump/<entity>`, `JSON_DUMPS_SCHEMA_NUMBER` (the producer writes it after
 * the data; see `schemaNumberAt`), then `extraMembers`; `memberOrder` writes them in another order.
 * Replaces an existing file atomically.
 * @throws Error for an unknown name in `omitMembers`, a `memberOrder` that is not an order of the
 *   members kept, and the errors of {@link writeTarArchive}.
 */
export async function writeJsonDump(root: string, options: JsonDumpOptions): Promise<BuiltFeedFile> {
  const { packet, entity } = options;
  const timestamp = options.timestamp ?? DEFAULT_TIMESTAMP;
  const dataMember = `mbdump/${entity}`;
  const standard: TarMember[] = [
    { name: 'TIMESTAMP', content: `${timestamp}\n` },
    { name: 'COPYING', content: COPYING },
    { name: 'README', content: README },
    { name: 'REPLICATION_SEQUENCE', content: `${options.replicationSequence ?? packet}\n` },
    { name: 'SCHEMA_SEQUENCE', content: `${options.schemaSequence ?? DEFAULT_SCHEMA_SEQUENCE}\n` },
    { name: dataMember, content: terminatedLines(options.lines) },
  ];
  const schemaNumber = {
    name: 'JSON_DUMPS_SCHEMA_NUMBER',
    content: `${options.jsonDumpsSchemaNumber ?? 1}\n`,
  };
  if (options.schemaNumberAt === 'before-data') standard.splice(standard.length - 1, 0, schemaNumber);
  else standard.push(schemaNumber);
  const omit = new Set(options.omitMembers ?? []);
  for (const name of omit) {
    if (!standard.some((member) => member.name === name)) {
      throw new Error(`json-dump-${packet}/${entity}: cannot omit unknown member ${JSON.stringify(name)}`);
    }
  }
  const kept = standard.filter((member) => !omit.has(member.name));
  const members = [
    ...inOrder(kept, options.memberOrder, `json-dump-${packet}/${entity}`),
    ...(options.extraMembers ?? []),
  ];
  const feedPath = jsonDumpPath(packet, entity);
  const built = await writeTarArchive(join(root, ...feedPath.split('/')), members, {
    compression: 'xz',
    mtime: options.mtime ?? pgTimestampSeconds(timestamp) ?? 0,
  });
  return { ...built, feedPath };
}

/** `members` in the order of the names in `order` (all of them, each once), or as they are. */
function inOrder(members: TarMember[], order: readonly string[] | undefined, what: string): TarMember[] {
  if (order === undefined) return members;
  const byName = new Map(members.map((member) => [member.name, member]));
  const ordered = order.map((name) => byName.get(name));
  if (
    new Set(order).size !== members.length ||
    order.length !== members.length ||
    ordered.some((member) => member === undefined)
  ) {
    const names = JSON.stringify(members.map((member) => member.name));
    throw new Error(`${what}: memberOrder ${JSON.stringify(order)} is not an order of ${names}`);
  }
  return ordered as TarMember[];
}

async function* terminatedLines(lines: Iterable<string> | AsyncIterable<string>): AsyncGenerator<string> {
  for await (const line of lines) yield `${line}\n`;
}

/**
 * Seconds since the epoch of a PostgreSQL timestamptz text (`2026-05-11 21:14:26.878674+00`),
 * rounded down; undefined when it does not parse.
 */
export function pgTimestampSeconds(text: string): number | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)([+-]\d{2})(?::?(\d{2}))?$/.exec(
    text.trim(),
  );
  if (!match) return undefined;
  const millis = Date.parse(`${match[1]}T${match[2]}${match[3]}:${match[4] ?? '00'}`);
  return Number.isNaN(millis) ? undefined : Math.floor(millis / 1000);
}

/** A Date as PostgreSQL timestamptz text (`2026-05-11 17:19:26.120+00`), the way an archive's TIMESTAMP is written. */
export function pgTimestamp(date: Date): string {
  return `${date.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

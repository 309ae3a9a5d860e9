import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { integerMember, readSmallMember } from './archiveMembers.js';
import type { EntityType } from './entities.js';
import { ArchiveError, SequenceMismatchError } from './errors.js';
import { LineSplitter } from './lineSplitter.js';
import { DEFAULT_MAX_ARCHIVE_BYTES, sizeLimit } from './sizeLimit.js';
import { parsePgTimestamp } from './timestamp.js';
import { createXzDecompressor, type XzDecoder } from './xz.js';

/** Metadata members of a JSON dump archive (FEED.md, JSON dump archives). */
export interface JsonDumpMetadata {
  replicationSequence: number;
  schemaSequence: number;
  /** `TIMESTAMP` as ISO 8601 UTC. */
  timestamp: string;
  /**
   * `JSON_DUMPS_SCHEMA_NUMBER` (`1` upstream), null when the archive has no such member. The producer
   * writes it after `mbdump/<entity>` (FEED.md, JSON dump archives), so it is known only once the
   * whole archive was read: null in `onMetadata` when it comes after the data, set in the summary.
   */
  jsonDumpsSchemaNumber: number | null;
}

/** Options of {@link readJsonDump}. */
export interface ReadJsonDumpOptions {
  /** Packet the archive was fetched for; `REPLICATION_SEQUENCE` must equal it. */
  packet: number;
  entity: EntityType;
  signal?: AbortSignal;
  /** Most decompressed bytes accepted, the whole tar stream (archive bombs). Default 64 GiB. */
  maxBytes?: number;
  /**
   * Called exactly once with the metadata. When `REPLICATION_SEQUENCE`, `TIMESTAMP` and
   * `SCHEMA_SEQUENCE` precede `mbdump/<entity>` (upstream's order, FEED.md, JSON dump archives), it
   * is called before the first line, and `jsonDumpsSchemaNumber` is null when that member follows
   * the data (the summary has it). Otherwise it is called once the whole archive was read, with the
   * complete metadata, before the promise resolves (never when the metadata is missing or wrong).
   */
  onMetadata?: (metadata: JsonDumpMetadata) => void;
  /** Called for a member that is neither metadata nor `mbdump/<entity>`; it is not read. */
  onIgnoredMember?: (name: string) => void;
  /** Decoder of the xz layer (see {@link XzDecoder}). Default `auto`. */
  decoder?: XzDecoder;
  /**
   * The archive's size in bytes, when known (the feed's Content-Length; a file's size is read from
   * disk): `auto` decodes a small archive in-process (see {@link resolveXzDecoder}). Null: unknown.
   */
  archiveBytes?: number | null;
  /** Called as the archive file is read, with the compressed bytes read so far (progress). */
  onProgress?: (compressedBytes: number) => void;
  /**
   * Backpressure for a store that writes asynchronously (the PostgreSQL COPY, issue 17): called
   * after each decompressed chunk's lines were handed to `onLine`; when it returns a promise, reading
   * pauses until it resolves (a rejection fails the read). The SQLite store, synchronous, has none.
   */
  whenReady?: () => Promise<void> | undefined;
}

/** What {@link readJsonDump} read. */
export interface JsonDumpSummary {
  metadata: JsonDumpMetadata;
  lineCount: number;
  bytes: number;
}

/** `known`, else the size of the file at `path` when it is one, else null (a stream of unknown size). */
function archiveBytesOf(path: string | Readable, known: number | null | undefined): number | null {
  if (known != null || typeof path !== 'string') return known ?? null;
  // A file that cannot be read fails its read below, with the reader's error.
  return statSync(path, { throwIfNoEntry: false })?.size ?? null;
}

/** Metadata members the reader accepts, with the most bytes each may hold. */
const METADATA_MEMBERS: Record<string, number> = {
  TIMESTAMP: 256,
  COPYING: 64 * 1024,
  README: 64 * 1024,
  REPLICATION_SEQUENCE: 64,
  SCHEMA_SEQUENCE: 64,
  JSON_DUMPS_SCHEMA_NUMBER: 64,
};

/** Default decompression limit of one JSON dump in bytes (see sizeLimit.ts). */
export const DEFAULT_MAX_BYTES = DEFAULT_MAX_ARCHIVE_BYTES;

/**
 * Reads a JSON dump archive (`<entity>.tar.xz`, FEED.md, JSON dump archives) from `path` (or from a
 * stream of the archive's bytes, e.g. a download as it arrives) as a stream
 * and calls `onLine(line, lineNumber)` for every line of `mbdump/<entity>` (split on `\n` only;
 * lineNumber is 1-based; `line` is the line's bytes without the `\n`, a view valid only during the
 * call: see {@link LineSplitter}). `onLine` is synchronous so that storing keeps pace with
 * decompression, which runs in parallel (another process or thread, see {@link XzDecoder}); memory
 * stays bounded by the chunk size and the longest line, whatever the dump's size.
 *
 * Members may come in any order (FEED.md, JSON dump archives: "Do not rely on member order"). The
 * metadata members read before `mbdump/<entity>` are checked before its first line is handed over;
 * those that follow it are checked once the whole archive was read, so a dump whose late
 * `REPLICATION_SEQUENCE` is wrong or whose `TIMESTAMP` is missing rejects only after `onLine` saw its
 * lines: callers store the lines in a transaction that commits only once this promise resolves.
 * @throws ArchiveError naming packet, entity and member when REPLICATION_SEQUENCE differs from the
 *   packet, a metadata member is missing, malformed or given twice, a member path is unsafe,
 *   `mbdump/<entity>` is absent, or the size limit is passed; decompression errors propagate.
 */
export async function readJsonDump(
  path: string | Readable,
  options: ReadJsonDumpOptions,
  onLine: (line: Buffer, lineNumber: number) => void,
): Promise<JsonDumpSummary> {
  const where = `JSON dump ${options.entity} of packet ${options.packet}`;
  const texts = new Map<string, string>();
  const dataMember = `mbdump/${options.entity}`;
  let notified = false;
  let lineCount = 0;
  let bytes = 0;
  let sawData = false;

  const extract = tar.extract();
  extract.on('entry', (header, source, next) => {
    // tar-stream's entries are streamx streams; Node's stream helpers accept them.
    const stream = source as unknown as Readable;
    // Entry errors are reported through the extractor (done → extract.destroy); without a listener
    // the destroyed entry would raise them a second time as unhandled.
    stream.on('error', () => {});
    const name = header.name;
    const done = (error?: unknown) => (error ? extract.destroy(error as Error) : next());
    if (name.startsWith('/') || name.split('/').includes('..')) {
      done(new ArchiveError(`${where}: unsafe member path ${JSON.stringify(name)}`));
      return;
    }
    if (header.type !== 'file') {
      stream.resume();
      stream.on('end', () => done());
      return;
    }
    const limit = METADATA_MEMBERS[name];
    if (limit !== undefined) {
      // A second copy would make the value checked before the data and the one in the summary differ.
      if (texts.has(name)) {
        stream.resume();
        done(new ArchiveError(`${where}: member ${name} appears twice`));
        return;
      }
      readSmallMember(stream, limit, `${where}: member ${name}`).then((text) => {
        texts.set(name, text);
        done();
      }, done);
      return;
    }
    if (name !== dataMember) {
      options.onIgnoredMember?.(name);
      stream.resume();
      stream.on('end', () => done());
      return;
    }
    sawData = true;
    try {
      // Members that follow the data are checked once the archive is read; those already read are
      // checked now, so a wrong dump fails before a line of a (possibly huge) data member is stored.
      checkMembersRead(texts, options.packet, where);
      if (REQUIRED_MEMBERS.every((member) => texts.has(member)) && !notified) {
        notified = true;
        options.onMetadata?.(parseMetadata(texts, options.packet, where));
      }
    } catch (error) {
      stream.resume();
      done(error);
      return;
    }
    // Only `\n` ends a line: U+2028, U+2029, U+0085 and `\r` are data (FEED.md). Lines are handed
    // over synchronously from each chunk: no per-line stream, promise or string.
    const splitter = new LineSplitter((line) => onLine(line, ++lineCount));
    let failed = false;
    stream.on('data', (chunk: Buffer) => {
      if (failed) return;
      bytes += chunk.length;
      try {
        splitter.push(chunk);
      } catch (error) {
        failed = true;
        stream.destroy(error as Error);
        return;
      }
      const ready = options.whenReady?.();
      if (!ready) return;
      stream.pause();
      ready.then(
        () => stream.resume(),
        (error) => {
          failed = true;
          stream.destroy(error as Error);
        },
      );
    });
    stream.once('end', () => {
      if (failed) return;
      try {
        splitter.end();
        done();
      } catch (error) {
        done(error);
      }
    });
    stream.once('error', (error) => done(error));
  });

  const limiter = sizeLimit(options.maxBytes ?? DEFAULT_MAX_BYTES, where);
  let compressed = 0;
  const file = typeof path === 'string' ? createReadStream(path, { highWaterMark: 256 * 1024 }) : path;
  if (options.onProgress) {
    const report = options.onProgress;
    file.on('data', (chunk: Buffer) => {
      compressed += chunk.length;
      report(compressed);
    });
  }
  await pipeline(
    file,
    createXzDecompressor(options.decoder ?? 'auto', where, archiveBytesOf(path, options.archiveBytes)),
    limiter,
    extract,
    {
      signal: options.signal,
    },
  );
  if (!sawData) throw new ArchiveError(`${where}: archive has no member ${dataMember}`);
  // Every member is read by now, wherever it stood: a member missing or wrong after the data fails
  // here, and the callers' transactions (sync/ingest.ts, sync/postgres/ingest.ts) roll the lines back.
  const metadata = parseMetadata(texts, options.packet, where);
  if (!notified) options.onMetadata?.(metadata);
  return { metadata, lineCount, bytes };
}

/** The members without which a dump is refused (JSON_DUMPS_SCHEMA_NUMBER may be absent). */
const REQUIRED_MEMBERS = ['REPLICATION_SEQUENCE', 'TIMESTAMP', 'SCHEMA_SEQUENCE'] as const;

/**
 * Checks the metadata members read so far, leaving the absent ones to {@link parseMetadata}.
 * @throws ArchiveError as parseMetadata, for a member present only.
 */
function checkMembersRead(texts: Map<string, string>, packet: number, where: string): void {
  if (texts.has('REPLICATION_SEQUENCE')) replicationSequenceOf(texts, packet, where);
  if (texts.has('TIMESTAMP')) timestampOf(texts, where);
  if (texts.has('SCHEMA_SEQUENCE')) integerMember(texts.get('SCHEMA_SEQUENCE'), 'SCHEMA_SEQUENCE', where);
  schemaNumber(texts, where);
}

function schemaNumber(texts: Map<string, string>, where: string): number | null {
  return texts.has('JSON_DUMPS_SCHEMA_NUMBER')
    ? integerMember(texts.get('JSON_DUMPS_SCHEMA_NUMBER'), 'JSON_DUMPS_SCHEMA_NUMBER', where)
    : null;
}

/**
 * The metadata of a dump from its members' texts (FEED.md, JSON dump archives).
 * @throws ArchiveError naming the member when one is missing or malformed, or when
 *   REPLICATION_SEQUENCE differs from `packet`.
 */
function parseMetadata(texts: Map<string, string>, packet: number, where: string): JsonDumpMetadata {
  return {
    replicationSequence: replicationSequenceOf(texts, packet, where),
    timestamp: timestampOf(texts, where),
    schemaSequence: integerMember(texts.get('SCHEMA_SEQUENCE'), 'SCHEMA_SEQUENCE', where),
    jsonDumpsSchemaNumber: schemaNumber(texts, where),
  };
}

function replicationSequenceOf(texts: Map<string, string>, packet: number, where: string): number {
  const replicationSequence = integerMember(texts.get('REPLICATION_SEQUENCE'), 'REPLICATION_SEQUENCE', where);
  if (replicationSequence !== packet) {
    throw new SequenceMismatchError(where, replicationSequence, packet);
  }
  return replicationSequence;
}

function timestampOf(texts: Map<string, string>, where: string): string {
  const timestampText = texts.get('TIMESTAMP');
  if (timestampText === undefined) throw new ArchiveError(`${where}: member TIMESTAMP is missing`);
  try {
    return parsePgTimestamp(timestampText);
  } catch (error) {
    throw new ArchiveError(`${where}: member TIMESTAMP: ${(error as Error).message}`);
  }
}

import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { integerMember, readSmallMember } from './archiveMembers.js';
import type { EntityType } from './entities.js';
import { ArchiveError } from './errors.js';
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
   * Called with the metadata members read before `mbdump/<entity>`, before the first line (those
   * that follow the data, such as `JSON_DUMPS_SCHEMA_NUMBER` upstream, are in the summary only).
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
 * @throws ArchiveError naming packet, entity and member when REPLICATION_SEQUENCE differs from the
 *   packet, a metadata member is missing or malformed, a member path is unsafe, `mbdump/<entity>`
 *   is absent, or the size limit is passed; decompression errors propagate.
 */
export async function readJsonDump(
  path: string | Readable,
  options: ReadJsonDumpOptions,
  onLine: (line: Buffer, lineNumber: number) => void,
): Promise<JsonDumpSummary> {
  const where = `JSON dump ${options.entity} of packet ${options.packet}`;
  const texts = new Map<string, string>();
  const dataMember = `mbdump/${options.entity}`;
  let metadata: JsonDumpMetadata | undefined;
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
      metadata = parseMetadata(texts, options.packet, where);
      options.onMetadata?.(metadata);
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
  // Members after the data (the producer writes JSON_DUMPS_SCHEMA_NUMBER last) are read by now.
  const complete = { ...metadata!, jsonDumpsSchemaNumber: schemaNumber(texts, where) };
  return { metadata: complete, lineCount, bytes };
}

function schemaNumber(texts: Map<string, string>, where: string): number | null {
  return texts.has('JSON_DUMPS_SCHEMA_NUMBER')
    ? integerMember(texts.get('JSON_DUMPS_SCHEMA_NUMBER'), 'JSON_DUMPS_SCHEMA_NUMBER', where)
    : null;
}

function parseMetadata(texts: Map<string, string>, packet: number, where: string): JsonDumpMetadata {
  const replicationSequence = integerMember(texts.get('REPLICATION_SEQUENCE'), 'REPLICATION_SEQUENCE', where);
  if (replicationSequence !== packet) {
    throw new ArchiveError(`${where}: REPLICATION_SEQUENCE is ${replicationSequence}, expected ${packet}`);
  }
  const timestampText = texts.get('TIMESTAMP');
  if (timestampText === undefined) throw new ArchiveError(`${where}: member TIMESTAMP is missing`);
  let timestamp: string;
  try {
    timestamp = parsePgTimestamp(timestampText);
  } catch (error) {
    throw new ArchiveError(`${where}: member TIMESTAMP: ${(error as Error).message}`);
  }
  return {
    replicationSequence,
    schemaSequence: integerMember(texts.get('SCHEMA_SEQUENCE'), 'SCHEMA_SEQUENCE', where),
    timestamp,
    jsonDumpsSchemaNumber: schemaNumber(texts, where),
  };
}

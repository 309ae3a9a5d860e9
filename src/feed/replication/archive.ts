import { createReadStream } from 'node:fs';
import { type Readable, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import split2 from 'split2';
import tar from 'tar-stream';
import { integerMember, readSmallMember } from '../archiveMembers.js';
import { createBzip2Decompressor } from '../bzip2.js';
import { ArchiveError } from '../errors.js';
import { DEFAULT_MAX_ARCHIVE_BYTES, sizeLimit } from '../sizeLimit.js';
import { parsePgTimestamp } from '../timestamp.js';
import { type DataMemberKind, lineHandlers, memberRole, V2_KINDS } from './members.js';
import type { ReplicationArchiveInfo, ReplicationFormat, ReplicationSink } from './types.js';

/** A line of a data member that cannot be read; names packet, member and 1-based line. */
export class ReplicationLineError extends ArchiveError {
  override name = 'ReplicationLineError';
  constructor(
    readonly packet: number,
    readonly member: string,
    readonly line: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Options of {@link readReplicationArchive}. */
export interface ReadReplicationOptions {
  /** Packet the archive was fetched for; `REPLICATION_SEQUENCE` must equal it. */
  packet: number;
  /** File name shown in errors (e.g. `replication-5-v2.tar.bz2`). */
  fileName?: string;
  signal?: AbortSignal;
  /** Most decompressed bytes accepted, the whole tar stream (archive bombs). Default 64 GiB. */
  maxBytes?: number;
}

/** Describes the archive in messages: `replication packet 5 (replication-5-v2.tar.bz2)`. */
export function packetLabel(packet: number, fileName?: string): string {
  return `replication packet ${packet}${fileName ? ` (${fileName})` : ''}`;
}

/**
 * Reads a replication packet archive (`.tar.bz2`, FEED.md, Replication packet archives) from `path`
 * as a stream (file → bzip2 → tar → lines; nothing is written to disk or held whole) and hands each
 * parsed line of its data members to `sink`, in archive order. Tells V1 from V2 by the members.
 * @returns the metadata, format and members read.
 * @throws ArchiveError naming the packet when REPLICATION_SEQUENCE differs from `options.packet`
 *   (as soon as it is read), a metadata member is missing or malformed, a member is unexpected
 *   (e.g. outside `mbdump/`) or repeated, the data members fit neither format, or the bzip2 or tar
 *   data is corrupt; ReplicationLineError (an ArchiveError) naming packet, member and line for a
 *   line that cannot be parsed or that `sink` refuses. Aborts (`options.signal`) and file system
 *   errors propagate.
 */
export async function readReplicationArchive(
  path: string,
  sink: ReplicationSink,
  options: ReadReplicationOptions,
): Promise<ReplicationArchiveInfo> {
  const state: ReadState = {
    packet: options.packet,
    where: packetLabel(options.packet, options.fileName),
    texts: new Map(),
    kinds: new Map(),
    lineCounts: {},
    handlers: lineHandlers(sink),
  };
  const extract = tar.extract();
  extract.on('entry', (header, source, next) => {
    // tar-stream's entries are streamx streams; Node's stream helpers accept them.
    const stream = source as unknown as Readable;
    // Destroying `extract` destroys the current entry with the same error, which the pipeline
    // already reports; without a listener it would also surface as an unhandled 'error'.
    stream.on('error', () => {});
    readEntry(state, header, stream).then(
      () => next(),
      (error: Error) => {
        stream.resume();
        extract.destroy(error);
      },
    );
  });
  try {
    const limiter = sizeLimit(options.maxBytes ?? DEFAULT_MAX_ARCHIVE_BYTES, state.where);
    await pipeline(createReadStream(path), createBzip2Decompressor(state.where), limiter, extract, {
      signal: options.signal,
    });
  } catch (error) {
    throw asArchiveError(error, state.where);
  }
  return summarize(state);
}

/** What reading one archive has gathered so far. */
interface ReadState {
  packet: number;
  where: string;
  /** Metadata member → content. */
  texts: Map<string, string>;
  /** Data member kind → member name. */
  kinds: Map<DataMemberKind, string>;
  lineCounts: Record<string, number>;
  handlers: ReturnType<typeof lineHandlers>;
}

/** Reads one tar member to its end according to its role. */
async function readEntry(state: ReadState, header: tar.Header, stream: Readable): Promise<void> {
  const { where } = state;
  const role = memberRole(header.name, header.type, where);
  const name = header.name.replace(/^\.\//, '');
  if (role.role === 'skip') {
    stream.resume();
    await finished(stream);
  } else if (role.role === 'metadata') {
    if (state.texts.has(name)) throw new ArchiveError(`${where}: member ${name} appears twice`);
    const text = await readSmallMember(stream, role.limit, `${where}: member ${name}`);
    state.texts.set(name, text);
    if (name === 'REPLICATION_SEQUENCE') checkSequence(text, state.packet, where);
  } else {
    const earlier = state.kinds.get(role.kind);
    if (earlier) throw new ArchiveError(`${where}: ${header.name} repeats ${earlier}`);
    state.kinds.set(role.kind, header.name);
    state.lineCounts[header.name] = await readLines(stream, header.name, state, state.handlers[role.kind]);
  }
}

/**
 * Names the packet in decompression and tar errors (unbzip2-stream throws bare TypeErrors on a
 * truncated file); our own errors, aborts and system errors (ENOENT, ...) pass unchanged.
 */
function asArchiveError(error: unknown, where: string): unknown {
  if (error instanceof ArchiveError || !(error instanceof Error)) return error;
  if (error.name === 'AbortError' || 'errno' in error) return error;
  return new ArchiveError(`${where}: corrupt archive (${error.name}: ${error.message})`, { cause: error });
}

/** Streams a data member's lines into `handle`, wrapping any error with member and line; returns the line count. */
async function readLines(
  stream: Readable,
  member: string,
  state: ReadState,
  handle: (text: string, line: number) => void,
): Promise<number> {
  let line = 0;
  let ended = false;
  const fail = (message: string, cause: unknown) =>
    new ReplicationLineError(
      state.packet,
      member,
      line,
      `${state.where}: ${member} line ${line}: ${message}`,
      { cause },
    );
  const lines = new Writable({
    objectMode: true,
    write(text: string, _encoding, callback) {
      line++;
      try {
        // `\.` is COPY's end-of-data marker; nothing may follow it.
        if (ended) throw new Error('line after the end-of-data marker \\.');
        if (text === '\\.') ended = true;
        else handle(text, line);
        callback();
      } catch (error) {
        callback(fail((error as Error).message, error));
      }
    },
  });
  // Only `\n` ends a line: COPY escapes every other control character inside values.
  await pipeline(stream, split2('\n'), lines);
  return ended ? line - 1 : line;
}

function checkSequence(text: string | undefined, packet: number, where: string): void {
  const sequence = integerMember(text, 'REPLICATION_SEQUENCE', where);
  if (sequence !== packet)
    throw new ArchiveError(`${where}: REPLICATION_SEQUENCE is ${sequence}, expected ${packet}`);
}

function summarize({ texts, kinds, lineCounts, packet, where }: ReadState): ReplicationArchiveInfo {
  checkSequence(texts.get('REPLICATION_SEQUENCE'), packet, where);
  const stamp = texts.get('TIMESTAMP');
  if (stamp === undefined) throw new ArchiveError(`${where}: member TIMESTAMP is missing`);
  let timestamp: string;
  try {
    timestamp = parsePgTimestamp(stamp);
  } catch (error) {
    throw new ArchiveError(`${where}: member TIMESTAMP: ${(error as Error).message}`);
  }
  const version = texts.has('DBMIRROR_VERSION')
    ? integerMember(texts.get('DBMIRROR_VERSION'), 'DBMIRROR_VERSION', where)
    : null;
  return {
    format: formatOf(kinds, version, where),
    replicationSequence: packet,
    schemaSequence: integerMember(texts.get('SCHEMA_SEQUENCE'), 'SCHEMA_SEQUENCE', where),
    timestamp,
    dbmirrorVersion: version,
    members: Object.fromEntries(kinds),
    hasKeys: kinds.has('pendingKeys'),
    lineCounts,
  };
}

/** V2 when `DBMIRROR_VERSION` is present (it must be 2, with `pending_data`), else V1 (both v1 members). */
function formatOf(
  kinds: Map<DataMemberKind, string>,
  version: number | null,
  where: string,
): ReplicationFormat {
  const v2 = [...kinds.keys()].filter((kind) => V2_KINDS.has(kind));
  const v1 = [...kinds.keys()].filter((kind) => !V2_KINDS.has(kind));
  if (version !== null) {
    if (version !== 2)
      throw new ArchiveError(`${where}: unsupported DBMIRROR_VERSION ${version} (expected 2)`);
    if (v1.length > 0)
      throw new ArchiveError(`${where}: DBMIRROR_VERSION 2 but v1 member ${kinds.get(v1[0]!)}`);
    if (!kinds.has('pendingData')) throw new ArchiveError(`${where}: member mbdump/pending_data is missing`);
    return 'V2';
  }
  if (v2.length > 0) throw new ArchiveError(`${where}: member ${kinds.get(v2[0]!)} but no DBMIRROR_VERSION`);
  if (!kinds.has('v1Pending') || !kinds.has('v1PendingData')) {
    throw new ArchiveError(
      `${where}: no replication data (needs mbdump/pending_data or mbdump/dbmirror_pending and mbdump/dbmirror_pendingdata)`,
    );
  }
  return 'V1';
}

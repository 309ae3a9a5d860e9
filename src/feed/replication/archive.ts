import { createReadStream } from 'node:fs';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import split2 from 'split2';
import tar from 'tar-stream';
import unbzip2 from 'unbzip2-stream';
import { ArchiveError } from '../errors.js';
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
 *   (e.g. outside `mbdump/`) or repeated, or the data members fit neither format;
 *   ReplicationLineError naming packet, member and line for a line that cannot be parsed or stored
 *   by `sink`; decompression errors and aborts (`options.signal`) propagate.
 */
export async function readReplicationArchive(
  path: string,
  sink: ReplicationSink,
  options: ReadReplicationOptions,
): Promise<ReplicationArchiveInfo> {
  const where = packetLabel(options.packet, options.fileName);
  const texts = new Map<string, string>();
  const kinds = new Map<DataMemberKind, string>();
  const lineCounts: Record<string, number> = {};
  const handlers = lineHandlers(sink);

  const extract = tar.extract();
  extract.on('entry', (header, source, next) => {
    // tar-stream's entries are streamx streams; Node's stream helpers accept them.
    const stream = source as unknown as Readable;
    const done = (error?: unknown) => (error ? extract.destroy(error as Error) : next());
    const drainThen = (error?: unknown) => {
      stream.resume();
      done(error);
    };
    let role: ReturnType<typeof memberRole>;
    try {
      role = memberRole(header.name, header.type, where);
    } catch (error) {
      drainThen(error);
      return;
    }
    if (role.role === 'skip') {
      stream.on('end', () => done());
      stream.resume();
    } else if (role.role === 'metadata') {
      readSmall(stream, role.limit, `${where}: member ${header.name}`)
        .then((text) => {
          texts.set(header.name.replace(/^\.\//, ''), text);
          if (header.name.endsWith('REPLICATION_SEQUENCE')) checkSequence(text, options.packet, where);
        })
        .then(() => done(), done);
    } else if (kinds.has(role.kind)) {
      drainThen(new ArchiveError(`${where}: ${header.name} repeats ${kinds.get(role.kind)}`));
    } else {
      kinds.set(role.kind, header.name);
      const counter = (count: number) => {
        lineCounts[header.name] = count;
      };
      readLines(stream, header.name, options.packet, where, handlers[role.kind], counter).then(() => done(), done);
    }
  });

  await pipeline(createReadStream(path), unbzip2(), extract, { signal: options.signal });
  return summarize(texts, kinds, lineCounts, options.packet, where);
}

/** Streams a data member's lines into `handle`, wrapping any error with member and line. */
function readLines(
  stream: Readable,
  member: string,
  packet: number,
  where: string,
  handle: (text: string, line: number) => void,
  onCount: (count: number) => void,
): Promise<void> {
  let line = 0;
  let ended = false;
  const fail = (message: string, cause?: unknown) =>
    new ReplicationLineError(packet, member, line, `${where}: ${member} line ${line}: ${message}`, { cause });
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
    final(callback) {
      onCount(ended ? line - 1 : line);
      callback();
    },
  });
  // Only `\n` ends a line: COPY escapes every other control character inside values.
  return pipeline(stream, split2('\n'), lines);
}

function readSmall(stream: Readable, limit: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stream.destroy(new ArchiveError(`${what} is larger than ${limit} bytes`));
      else chunks.push(chunk);
    });
    stream.on('error', reject);
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function integerText(text: string | undefined, name: string, where: string): number {
  if (text === undefined) throw new ArchiveError(`${where}: member ${name} is missing`);
  if (!/^\d+\n?$/.test(text)) throw new ArchiveError(`${where}: member ${name} is not a number: ${JSON.stringify(text.slice(0, 40))}`);
  return Number(text.trim());
}

function checkSequence(text: string | undefined, packet: number, where: string): void {
  const sequence = integerText(text, 'REPLICATION_SEQUENCE', where);
  if (sequence !== packet) throw new ArchiveError(`${where}: REPLICATION_SEQUENCE is ${sequence}, expected ${packet}`);
}

function summarize(
  texts: Map<string, string>,
  kinds: Map<DataMemberKind, string>,
  lineCounts: Record<string, number>,
  packet: number,
  where: string,
): ReplicationArchiveInfo {
  checkSequence(texts.get('REPLICATION_SEQUENCE'), packet, where);
  const stamp = texts.get('TIMESTAMP');
  if (stamp === undefined) throw new ArchiveError(`${where}: member TIMESTAMP is missing`);
  let timestamp: string;
  try {
    timestamp = parsePgTimestamp(stamp);
  } catch (error) {
    throw new ArchiveError(`${where}: member TIMESTAMP: ${(error as Error).message}`);
  }
  const version = texts.has('DBMIRROR_VERSION') ? integerText(texts.get('DBMIRROR_VERSION'), 'DBMIRROR_VERSION', where) : null;
  return {
    format: formatOf(kinds, version, where),
    replicationSequence: packet,
    schemaSequence: integerText(texts.get('SCHEMA_SEQUENCE'), 'SCHEMA_SEQUENCE', where),
    timestamp,
    dbmirrorVersion: version,
    members: Object.fromEntries(kinds),
    hasKeys: kinds.has('pendingKeys'),
    lineCounts,
  };
}

/** V2 when `DBMIRROR_VERSION` is present (it must be 2, with `pending_data`), else V1 (both v1 members). */
function formatOf(kinds: Map<DataMemberKind, string>, version: number | null, where: string): ReplicationFormat {
  const v2 = [...kinds.keys()].filter((kind) => V2_KINDS.has(kind));
  const v1 = [...kinds.keys()].filter((kind) => !V2_KINDS.has(kind));
  if (version !== null) {
    if (version !== 2) throw new ArchiveError(`${where}: unsupported DBMIRROR_VERSION ${version} (expected 2)`);
    if (v1.length > 0) throw new ArchiveError(`${where}: DBMIRROR_VERSION 2 but v1 member ${kinds.get(v1[0]!)}`);
    if (!kinds.has('pendingData')) throw new ArchiveError(`${where}: member mbdump/pending_data is missing`);
    return 'V2';
  }
  if (v2.length > 0) throw new ArchiveError(`${where}: member ${kinds.get(v2[0]!)} but no DBMIRROR_VERSION`);
  if (!kinds.has('v1Pending') || !kinds.has('v1PendingData')) {
    throw new ArchiveError(`${where}: no replication data (needs mbdump/pending_data or mbdump/dbmirror_pending and mbdump/dbmirror_pendingdata)`);
  }
  return 'V1';
}

import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { ArchiveError } from './errors.js';
import { createXzDecompressor, type XzDecoder } from './xz.js';

/** What the head of a JSON dump archive says before its data member. */
export interface DumpHead {
  /** `REPLICATION_SEQUENCE`: the packet the dump is consistent with. */
  replicationSequence: number;
  /** The entity type named by the data member `mbdump/<entity>` (not checked here). */
  dataMember: string;
}

/**
 * Reads a JSON dump archive (hourly or full, FEED.md, JSON dump archives) only up to its data
 * member: upstream writes `REPLICATION_SEQUENCE` before `mbdump/<entity>`, so a full dump of tens
 * of GB is not decompressed to learn its packet.
 * @throws ArchiveError naming the file when no `mbdump/` member comes, or REPLICATION_SEQUENCE is
 *   missing before it or not a number; decompression errors.
 */
export async function readDumpHead(path: string, decoder: XzDecoder = 'auto'): Promise<DumpHead> {
  let sequence: string | undefined;
  let dataMember: string | undefined;
  const extract = tar.extract();
  const stop = new AbortController();
  extract.on('entry', (header, source, next) => {
    const stream = source as unknown as Readable;
    // The abort below destroys the entry too; its error is the expected stop, not a failure.
    stream.on('error', () => {});
    if (header.name.startsWith('mbdump/')) {
      dataMember = header.name.slice('mbdump/'.length);
      stop.abort();
      return;
    }
    if (header.name !== 'REPLICATION_SEQUENCE') return void stream.on('end', next).resume();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      sequence = Buffer.concat(chunks).toString('utf8').slice(0, 64);
      next();
    });
  });
  try {
    await pipeline(createReadStream(path), createXzDecompressor(decoder, path), extract, {
      signal: stop.signal,
    });
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  }
  if (dataMember === undefined) throw new ArchiveError(`${path}: no member mbdump/<entity> in the archive`);
  const text = sequence?.trim();
  if (text === undefined || !/^\d+$/.test(text)) {
    throw new ArchiveError(
      `${path}: REPLICATION_SEQUENCE ${text === undefined ? 'is missing before the data' : `is not a number: ${JSON.stringify(text)}`}`,
    );
  }
  return { replicationSequence: Number(text), dataMember };
}

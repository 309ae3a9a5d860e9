import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { ArchiveError } from './errors.js';
import { createXzDecompressor, type XzDecoder } from './xz.js';

/** What the head of a JSON dump archive says: its packet and its data member. */
export interface DumpHead {
  /** `REPLICATION_SEQUENCE`: the packet the dump is consistent with. */
  replicationSequence: number;
  /** The entity type named by the data member `mbdump/<entity>` (not checked here). */
  dataMember: string;
}

/**
 * Reads a JSON dump archive (hourly or full, FEED.md, JSON dump archives) only until it knows both
 * `REPLICATION_SEQUENCE` and the data member `mbdump/<entity>`, then stops decompressing. Upstream
 * writes `REPLICATION_SEQUENCE` before the data, so a full dump of tens of GB is read only up to its
 * data member's header. FEED.md says not to rely on member order, though: when the data member
 * comes first, its bytes are decompressed and skipped until `REPLICATION_SEQUENCE` appears, which
 * costs a whole decompression pass more (bootstrap then decompresses the dump again to import it)
 * only for an archive built in another order than upstream's.
 * @throws ArchiveError naming the file when the archive has no `mbdump/` member, or
 *   REPLICATION_SEQUENCE is missing from it or not a number; decompression errors.
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
    const skip = () => void stream.on('end', next).resume();
    if (header.name.startsWith('mbdump/')) {
      if (dataMember !== undefined) return skip();
      dataMember = header.name.slice('mbdump/'.length);
      if (sequence !== undefined) return stop.abort();
      // REPLICATION_SEQUENCE follows the data: skip the data's bytes (not stored) to reach it.
      return skip();
    }
    if (header.name !== 'REPLICATION_SEQUENCE') return skip();
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      sequence = Buffer.concat(chunks).toString('utf8').slice(0, 64);
      if (dataMember !== undefined) stop.abort();
      else next();
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
      `${path}: REPLICATION_SEQUENCE ${text === undefined ? 'is missing from the archive' : `is not a number: ${JSON.stringify(text)}`}`,
    );
  }
  return { replicationSequence: Number(text), dataMember };
}

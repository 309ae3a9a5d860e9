import type { ReadJsonDumpOptions } from '../feed/jsonDump.js';

/** The part of an ingest's options (sync/ingest.ts, IngestJsonDumpOptions) that reading the dump takes. */
export type DumpReadSource = Pick<
  ReadJsonDumpOptions,
  'packet' | 'entity' | 'signal' | 'maxBytes' | 'decoder' | 'archiveBytes'
> & {
  /** Compressed bytes read so far and lines stored so far. */
  onProgress?: (compressedBytes: number, lines: number) => void;
};

/**
 * What readJsonDump is told for one ingest of `options` (either store): the packet and entity type,
 * the limits and decoder, and progress counting the lines `counts` has stored or quarantined.
 */
export function dumpReadOptions(
  options: DumpReadSource,
  counts: { changeCount: number; quarantineCount: number },
): ReadJsonDumpOptions {
  const { onProgress } = options;
  return {
    packet: options.packet,
    entity: options.entity,
    signal: options.signal,
    maxBytes: options.maxBytes,
    decoder: options.decoder,
    archiveBytes: options.archiveBytes,
    onProgress: onProgress && ((read) => onProgress(read, counts.changeCount + counts.quarantineCount)),
  };
}

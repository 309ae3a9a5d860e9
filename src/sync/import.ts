import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { isBulkLoad, withBulkJournal } from '../db/bulkJournal.js';
import type { Store } from '../db/client.js';
import { MAX_PACKET } from '../db/keys.js';
import { mergeSearchIndex, SEARCH_MERGE_BUDGET_MS } from '../db/searchMerge.js';
import { ENTITY_TYPES, type EntityType, isEntityType } from '../feed/entities.js';
import { ArchiveError } from '../feed/errors.js';
import { createXzDecompressor, type XzDecoder } from '../feed/xz.js';
import { type IngestJsonDumpOptions, type IngestResult, ingestJsonDump } from './ingest.js';

/** Options of {@link importJsonDump}. */
export interface ImportJsonDumpOptions {
  /** Local `<entity>.tar.xz`: an hourly JSON dump or a full one (same line format, FEED.md). */
  path: string;
  /** Packet the dump belongs to; the archive's REPLICATION_SEQUENCE must equal it. */
  packet: number;
  /** Entity type; default from the archive's member `mbdump/<entity>`. */
  entity?: EntityType;
  signal?: AbortSignal;
  decoder?: XzDecoder;
  /** Most decompressed bytes accepted (archive bombs); default readJsonDump's. */
  maxBytes?: number;
  /** Compressed bytes read so far, of `totalBytes` (the file's size). */
  onProgress?: (readBytes: number, totalBytes: number) => void;
  now?: () => Date;
}

/** What {@link importJsonDump} stored. */
export interface ImportResult extends IngestResult {
  entity: EntityType;
  /** Compressed size of the archive in bytes. */
  fileBytes: number;
}

/**
 * The entity type of a JSON dump archive, from its data member `mbdump/<entity>` (FEED.md, JSON
 * dump archives). Only the archive's head is read: the metadata members come first.
 * @throws ArchiveError naming the file when no `mbdump/` member exists or it names no entity type.
 */
export async function dumpEntityOf(path: string, decoder: XzDecoder = 'auto'): Promise<EntityType> {
  let found: string | undefined;
  const extract = tar.extract();
  const stop = new AbortController();
  extract.on('entry', (header, stream, next) => {
    // The abort below destroys the entry too; its error is the expected stop, not a failure.
    (stream as unknown as Readable).on('error', () => {});
    if (header.name.startsWith('mbdump/')) {
      found = header.name.slice('mbdump/'.length);
      stop.abort();
      return;
    }
    (stream as unknown as Readable).on('end', next).resume();
  });
  try {
    await pipeline(createReadStream(path), createXzDecompressor(decoder, path), extract, {
      signal: stop.signal,
    });
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  }
  if (found === undefined) throw new ArchiveError(`${path}: no member mbdump/<entity> in the archive`);
  if (!isEntityType(found)) {
    throw new ArchiveError(
      `${path}: member mbdump/${found} is no entity type (expected one of ${ENTITY_TYPES.join(', ')}); pass --entity`,
    );
  }
  return found;
}

/**
 * Loads a local JSON dump file into the database through the sync's own pipeline
 * ({@link ingestJsonDump}: one transaction, the same fast path, quarantine and file-order
 * positions), as packet `packet`. A full JSON dump (tens of GB) streams through in bounded memory.
 * The dump is recorded as SYNCED with no feed file (it did not come from the feed). Then the search
 * index's segments are merged (db/searchMerge.ts): all of them after a bulk load, else for at most
 * `SEARCH_MERGE_BUDGET_MS`.
 * @throws ArchiveError for a malformed archive or a REPLICATION_SEQUENCE other than `packet`;
 *   RangeError for a packet number out of range; the abort reason; SQLite errors (e.g. busy).
 *   Nothing is stored then, except when the merge after the COMMIT fails (disk full): the dump
 *   stays stored, and the next import or sync pass merges again.
 */
export async function importJsonDump(store: Store, options: ImportJsonDumpOptions): Promise<ImportResult> {
  // ingestSizedDump decides whether the dump is a bulk load and says so through its hook.
  let bulk = false;
  const result = await importJsonDumpWith(
    (ingest) =>
      ingestSizedDump(store, ingest, statSync(ingest.archivePath).size, () => {
        bulk = true;
      }),
    options,
  );
  // A bulk load wrote most of the index: merging all of it costs a fraction of that. Otherwise a
  // bounded step, resumed by the next import or sync pass (db/searchMerge.ts).
  mergeSearchIndex(store.sqlite, bulk ? undefined : SEARCH_MERGE_BUDGET_MS);
  return result;
}

/**
 * Stores one JSON dump through {@link ingestJsonDump}, as a bulk load when its archive of
 * `archiveBytes` adds about as much as the database holds (`isBulkLoad`: a full dump into a new or
 * small database, the first large dumps synced into a new one), as `bootstrap` does
 * (db/bulkJournal.ts): a rollback journal while the connection is alone, and the MBID index built
 * after the lines. Used by `import` and by the sync (sqliteSyncStore.ts). `beforeBulkLoad` runs
 * first when the dump is a bulk load (the sync commits its packet's transaction there: the journal
 * mode changes only outside a transaction; `import` learns there to merge the whole search index).
 * @throws as ingestJsonDump.
 */
export async function ingestSizedDump(
  store: Store,
  options: IngestJsonDumpOptions,
  archiveBytes: number,
  beforeBulkLoad?: () => void,
): Promise<IngestResult> {
  if (!isBulkLoad(store, archiveBytes)) return ingestJsonDump(store, options);
  beforeBulkLoad?.();
  return (await withBulkJournal(store, () => ingestJsonDump(store, { ...options, bulk: true }))).result;
}

/**
 * {@link importJsonDump} through the ingest of any store (the PostgreSQL one: sync/postgres/import.ts):
 * the same checks of packet and entity type, the same ingest options.
 * @throws as importJsonDump, with the errors of `ingest`.
 */
export async function importJsonDumpWith(
  ingest: (options: IngestJsonDumpOptions) => Promise<IngestResult>,
  options: ImportJsonDumpOptions,
): Promise<ImportResult> {
  if (!Number.isInteger(options.packet) || options.packet < 0 || options.packet > MAX_PACKET) {
    throw new RangeError(`packet must be an integer from 0 to ${MAX_PACKET}, not ${options.packet}`);
  }
  const fileBytes = statSync(options.path).size;
  const entity = options.entity ?? (await dumpEntityOf(options.path, options.decoder));
  const result = await ingest({
    packet: options.packet,
    entity,
    archivePath: options.path,
    file: null,
    signal: options.signal,
    now: options.now,
    decoder: options.decoder,
    maxBytes: options.maxBytes,
    onProgress: options.onProgress && ((read) => options.onProgress!(read, fileBytes)),
  });
  return { ...result, entity, fileBytes };
}

import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { type Flags, loadConfig } from './config.js';
import { openStore, type Store } from './db/client.js';
import { MAX_PACKET } from './db/keys.js';
import { ENTITY_TYPES, type EntityType, isEntityType } from './feed/entities.js';
import { ArchiveError } from './feed/errors.js';
import { createXzDecompressor, type XzDecoder } from './feed/xz.js';
import { createLogger, type Logger } from './logger.js';
import { createProgress, type Progress } from './ops/progress.js';
import { type IngestResult, ingestJsonDump } from './sync/ingest.js';
import { acquireWriterLock } from './sync/lock.js';

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
 * The dump is recorded as SYNCED with no feed file (it did not come from the feed).
 * @throws ArchiveError for a malformed archive or a REPLICATION_SEQUENCE other than `packet`;
 *   RangeError for a packet number out of range; the abort reason; SQLite errors (e.g. busy).
 *   Nothing is stored then.
 */
export async function importJsonDump(store: Store, options: ImportJsonDumpOptions): Promise<ImportResult> {
  if (!Number.isInteger(options.packet) || options.packet < 0 || options.packet > MAX_PACKET) {
    throw new RangeError(`packet must be an integer from 0 to ${MAX_PACKET}, not ${options.packet}`);
  }
  const fileBytes = statSync(options.path).size;
  const entity = options.entity ?? (await dumpEntityOf(options.path, options.decoder));
  const result = await ingestJsonDump(store, {
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

/** Flags of `livefeed import` beside the shared ones. */
export interface ImportFlags extends Flags {
  packet?: string;
  entity?: string;
}

/**
 * Runs `livefeed import FILE --packet N [--entity E]`: takes the writer lock, imports with a
 * progress bar on a terminal (structured `progress` log lines otherwise), prints a summary line.
 * Ctrl-C rolls the import back.
 * @returns the exit code (0).
 * @throws ConfigError, LockHeldError, ArchiveError, RangeError or SQLite errors (the CLI maps them).
 */
export async function runImport(file: string, flags: ImportFlags, logger?: Logger): Promise<number> {
  const { packet: packetText, entity: entityText, ...shared } = flags;
  const config = loadConfig(shared);
  const log = logger ?? createLogger(config.logLevel, { service: 'livefeed' }, config.logFormat);
  if (packetText === undefined || !/^\d+$/.test(packetText))
    throw new RangeError(`--packet must be a number, not ${packetText}`);
  if (entityText !== undefined && !isEntityType(entityText)) {
    throw new RangeError(
      `--entity ${entityText} is no entity type (expected one of ${ENTITY_TYPES.join(', ')})`,
    );
  }
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('import stopped by a signal: nothing was stored'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const store = openStore(config.db);
  let progress: Progress | undefined;
  try {
    const lock = await acquireWriterLock(store, { logger: log, signal: controller.signal });
    try {
      const started = Date.now();
      let shownMb = 0;
      const result = await importJsonDump(store, {
        path: file,
        packet: Number(packetText),
        entity: entityText as EntityType | undefined,
        signal: AbortSignal.any([controller.signal, lock.lost]),
        onProgress: (read, total) => {
          progress ??= createProgress({
            label: 'import',
            total: Math.max(1, Math.ceil(total / 1e6)),
            unit: 'MB (xz)',
            logger: log,
          });
          const mb = Math.floor(read / 1e6);
          if (mb > shownMb) {
            progress.tick(mb - shownMb);
            shownMb = mb;
          }
        },
      });
      if (progress) {
        progress.tick(Math.max(0, Math.ceil(result.fileBytes / 1e6) - shownMb));
        progress.stop();
      }
      const seconds = (Date.now() - started) / 1000;
      log.info(
        {
          event: 'import-done',
          file,
          packet: result.metadata.replicationSequence,
          entity: result.entity,
          ...summary(result),
          seconds,
        },
        'import done',
      );
      process.stdout.write(
        `imported ${file} as packet ${result.metadata.replicationSequence} ${result.entity}: ${result.changeCount} changes, ` +
          `${result.quarantineCount} quarantined, ${result.lineCount} lines, ${(result.bytes / 1e6).toFixed(1)} MB ` +
          `in ${seconds.toFixed(1)} s\n`,
      );
      return 0;
    } finally {
      lock.release();
    }
  } finally {
    progress?.stop();
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    store.close();
  }
}

function summary(result: ImportResult) {
  return {
    changes: result.changeCount,
    quarantined: result.quarantineCount,
    lines: result.lineCount,
    bytes: result.bytes,
    fileBytes: result.fileBytes,
  };
}

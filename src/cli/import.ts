import { type Flags, loadConfig } from '../config.js';
import { openStore } from '../db/client.js';
import { ENTITY_TYPES, type EntityType, isEntityType } from '../feed/entities.js';
import { createLogger, type Logger } from '../logger.js';
import { createProgress, type Progress } from '../ops/progress.js';
import { type ImportResult, importJsonDump } from '../sync/import.js';
import { acquireWriterLock } from '../sync/lock.js';

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

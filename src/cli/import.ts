import { ConfigError } from '../config.js';
import { openStore } from '../db/client.js';
import { feedRewrites } from '../db/feedWindow.js';
import { ENTITY_TYPES, type EntityType, isEntityType } from '../feed/entities.js';
import { SequenceMismatchError, safeMessage } from '../feed/errors.js';
import type { Logger } from '../logger.js';
import { createProgress, formatSize, type Progress, type SizeUnit, sizeUnit } from '../ops/progress.js';
import { type ImportResult, importJsonDump } from '../sync/import.js';
import { warnRewritten } from '../sync/rewriteNotice.js';
import { restampComplete } from '../sync/state.js';
import type { CommandImplementation } from './command.js';
import { EXIT } from './exit.js';
import type { ImportTarget } from './importTarget.js';
import { commandLogger, withWriterLock } from './session.js';
import { chooseDatabase, choosePostgres } from './targets.js';

/**
 * A progress bar of the compressed file read, in kB or MB by its size (ops/progress.ts
 * `sizeUnit`), made on the first report (when the size is known).
 */
function sizeProgress(logger: Logger) {
  let progress: Progress | undefined;
  let unit: SizeUnit = sizeUnit(0);
  let shown = 0;
  return {
    update(read: number, total: number) {
      if (!progress) {
        unit = sizeUnit(total);
        progress = createProgress({
          label: 'import',
          total: Math.max(1, Math.ceil(total / unit.bytes)),
          unit: `${unit.name} (xz)`,
          logger,
        });
      }
      const now = Math.floor(read / unit.bytes);
      if (now > shown) {
        progress.tick(now - shown);
        shown = now;
      }
    },
    /** Fills the bar to `fileBytes` and stops it. */
    finish(fileBytes: number) {
      progress?.tick(Math.max(0, Math.ceil(fileBytes / unit.bytes) - shown));
      progress?.stop();
    },
    stop: () => progress?.stop(),
  };
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

/** `--packet` and `--entity` checked. @throws ConfigError naming the flag and value (exit 2). */
function importTarget(packetText: unknown, entityText: unknown): { packet: number; entity?: EntityType } {
  if (typeof packetText !== 'string' || !/^\d+$/.test(packetText))
    throw new ConfigError(`--packet ${packetText}: expected a packet number (a whole number)`);
  if (entityText !== undefined && !isEntityType(String(entityText))) {
    throw new ConfigError(
      `--entity ${entityText} is no entity type (expected one of ${ENTITY_TYPES.join(', ')})`,
    );
  }
  return { packet: Number(packetText), entity: entityText as EntityType | undefined };
}

/** A dump of another packet than `--packet` as the configuration mistake it is (exit 2); other errors as they are. */
function wrongPacket(error: unknown, file: string): unknown {
  if (!(error instanceof SequenceMismatchError)) return error;
  return new ConfigError(
    `--packet ${error.expected}: ${file} is the JSON dump of packet ${error.found} (its REPLICATION_SEQUENCE); ` +
      `pass --packet ${error.found}. Nothing was stored`,
  );
}

/**
 * After an import stored events behind the change stream: announces its packet again so that a
 * `serve` wakes its followers (ImportTarget.reannounce). The dump is committed by then, so a failure
 * here is logged, not thrown; a packet not complete is said to wait for its completion.
 */
async function reannounce(store: ImportTarget, packet: number, log: Logger): Promise<void> {
  try {
    if (await store.reannounce(packet, new Date().toISOString())) return;
    log.info(
      { event: 'reannounce-waits', packet },
      `packet ${packet} is not complete: entityChanged followers rewind when a sync completes it`,
    );
  } catch (error) {
    log.warn(
      { event: 'reannounce-failed', packet, err: safeMessage(error) },
      `the dump is stored, but packet ${packet} could not be announced again (${safeMessage(error)}): ` +
        'entityChanged followers rewind at the next packet a sync completes',
    );
  }
}

/** The SQLite file `path` as an import target. */
function sqliteTarget(path: string, log: Logger): ImportTarget {
  const store = openStore(path);
  return {
    withLock: (stopMessage, work) => withWriterLock(store, log, stopMessage, work),
    importDump: (options) => importJsonDump(store, options),
    feedRewrites: async () => feedRewrites(store),
    reannounce: async (packet, now) => restampComplete(store, packet, now),
    close: () => store.close(),
  };
}

/**
 * `livefeed import FILE --packet N [--entity E]`: takes the writer lock, imports with a progress
 * bar on a terminal (structured `progress` log lines otherwise), prints a summary line. Ctrl-C
 * rolls the import back. Into SQLite, or into PostgreSQL when `--db` is a postgres:// URL (the
 * PostgreSQL code is loaded only then). Throws ConfigError (a bad flag, or a dump of another packet than `--packet`), LockHeldError, ArchiveError,
 * SQLite or PostgreSQL errors (src/cli/exit.ts maps them).
 */
export const importCommand: CommandImplementation = {
  async run({ config, flags, args }) {
    const file = args[0]!;
    const log = commandLogger(config);
    const target = importTarget(flags.packet, flags.entity);
    const postgres = choosePostgres(config);
    const store = postgres
      ? await (await import('./importPostgres.js')).postgresImportTarget(postgres, log)
      : sqliteTarget(chooseDatabase('import', config, flags).path, log);
    const progress = sizeProgress(log);
    try {
      return await store.withLock('import stopped by a signal: nothing was stored', async (signal) => {
        const started = Date.now();
        const rewrites = await store.feedRewrites();
        const result = await store
          .importDump({ path: file, ...target, signal, onProgress: progress.update })
          .catch((error: unknown) => {
            throw wrongPacket(error, file);
          });
        progress.finish(result.fileBytes);
        const { replicationSequence: packet } = result.metadata;
        if (warnRewritten(log, rewrites, await store.feedRewrites())) await reannounce(store, packet, log);
        const seconds = (Date.now() - started) / 1000;
        log.info(
          { event: 'import-done', file, packet, entity: result.entity, ...summary(result), seconds },
          'import done',
        );
        process.stdout.write(
          `imported ${file} as packet ${packet} ${result.entity}: ${result.changeCount} changes, ` +
            `${result.quarantineCount} quarantined, ${result.lineCount} lines, ${formatSize(result.bytes)} ` +
            `in ${seconds.toFixed(1)} s${result.unchanged ? '; identical to the copy stored, so the change stream is unchanged' : ''}\n`,
        );
        return EXIT.ok;
      });
    } finally {
      progress.stop();
      await store.close();
    }
  },
};

import { join } from 'node:path';
import { type Config, ConfigError, type Flags } from '../config.js';
import { openStore } from '../db/client.js';
import { markDemo } from '../db/status.js';
import type { FeedClient } from '../feed/client.js';
import type { EntityType } from '../feed/entities.js';
import { isFullDumpName } from '../feed/fullDumps.js';
import { replicationPacketName } from '../feed/protocol/urls.js';
import type { Logger } from '../logger.js';
import { createProgress, type Progress } from '../ops/progress.js';
import { BUNDLED_FEED_ROOT, SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../samplefeed/server.js';
import { type BootstrapOptions, type BootstrapResult, bootstrapFromFullDumps } from '../sync/bootstrap.js';
import { sqliteBootstrapStore } from '../sync/bootstrapStore.js';
import { warnRewritten } from '../sync/rewriteNotice.js';
import { createVerifier } from '../sync/verifier.js';
import type { BootstrapTarget } from './bootstrapTarget.js';
import type { CommandImplementation } from './command.js';
import { EXIT } from './exit.js';
import { commandLogger, withWriterLock } from './session.js';
import { BUNDLED_SIGNING_KEY, chooseDatabase, choosePostgres, feedClient } from './targets.js';

const mb = (bytes: number) => Math.ceil(bytes / 1e6);

/** The SQLite file `path` as a bootstrap target (opened, migrated). */
function sqliteTarget(path: string, log: Logger): BootstrapTarget {
  const store = openStore(path);
  return {
    store: sqliteBootstrapStore(store),
    withLock: (stopMessage, work) => withWriterLock(store, log, stopMessage, work),
    markDemo: async () => markDemo(store),
    close: () => store.close(),
  };
}

/** The database of `livefeed bootstrap`: PostgreSQL for a postgres:// `--db` (its code loaded only then). */
async function bootstrapTarget(config: Config, flags: Flags, log: Logger): Promise<BootstrapTarget> {
  const postgres = choosePostgres(config);
  if (postgres) return (await import('./bootstrapPostgres.js')).postgresBootstrapTarget(postgres, log);
  return sqliteTarget(chooseDatabase('bootstrap', config, flags).path, log);
}

/** A progress bar per entity type: MB of xz read, lines stored, lines per second (ETA from the bar). */
function entityProgress(
  logger: Logger,
): Pick<BootstrapOptions, 'onEntity' | 'onProgress'> & { stop(): void } {
  let progress: Progress | undefined;
  let current: EntityType | undefined;
  let shownMb = 0;
  let started = Date.now();
  const stop = () => {
    progress?.stop();
    progress = undefined;
  };
  return {
    stop,
    onEntity: ({ entity, skipped }) => {
      stop();
      if (skipped) process.stdout.write(`${entity}: already stored by an earlier run\n`);
    },
    onProgress: ({ entity, readBytes, totalBytes, lines }) => {
      if (entity !== current || !progress) {
        current = entity;
        progress = createProgress({
          label: `bootstrap ${entity}`,
          total: mb(totalBytes),
          unit: 'MB (xz)',
          logger,
        });
        shownMb = 0;
        started = Date.now();
      }
      const seconds = Math.max(0.001, (Date.now() - started) / 1000);
      const step = Math.max(0, mb(readBytes) - shownMb);
      shownMb += step;
      progress.tick(step, `${lines} lines, ${Math.round(lines / seconds)} lines/s`);
    },
  };
}

function printSummary(result: BootstrapResult, seconds: number): void {
  for (const entity of result.imported) {
    process.stdout.write(
      `${entity.entity}: ${entity.changes} entities, ${entity.quarantined} quarantined, ${entity.lines} lines\n`,
    );
  }
  process.stdout.write(
    `bootstrapped full dump ${result.dump} (packet ${result.packet}) in ${seconds.toFixed(1)} s; ` +
      `${continuationText(result)}\n`,
  );
}

/** Whether packets below the full dumps' one keep `latestPacket` below it (see BootstrapContinuation.latest). */
function brokenBelow({ packet, continuation }: BootstrapResult): boolean {
  return !!continuation && (continuation.latest === null || continuation.latest < packet);
}

/** Where the next sync starts, and why when the database already held other packets. */
function continuationText(result: BootstrapResult): string {
  const { packet, continuation } = result;
  if (brokenBelow(result)) {
    return (
      `packets below the full dump are incomplete or missing (an earlier sync or bootstrap left them), so ` +
      `latestPacket stays at ${continuation?.latest ?? '(none)'} until a sync completes them; for a clean copy, ` +
      'bootstrap into a new database (README, First import)'
    );
  }
  const held = continuation?.heldAbove;
  if (!held) return `the sync continues at packet ${packet + 1}`;
  const already = `the database already held packets ${held.first}..${held.last}, newer than the full dump`;
  const gap = continuation.gap;
  if (!gap) return `${already}: the sync continues after them (or at the first of them not complete)`;
  return (
    `${already}: packets ${gap.from}..${gap.to} between them are now recorded as incomplete, ` +
    `and the next sync fetches them first`
  );
}

/**
 * Asks the live feed (token or demo) whether the packet after the full dumps is still there: if
 * `replication-info` is past it and its replication packet answers 404, the copy cannot be
 * continued. The archive is asked for (its body not read), not its `.asc`: upstream publishes an
 * archive without its signature when signing fails. The latest packet answering 404 is no gap: it
 * may not be copied yet (FEED.md, Errors), and the sync waits for it.
 * @returns EXIT.ok, or EXIT.failedFiles naming the gap.
 */
async function checkContinuation(
  result: BootstrapResult,
  config: Config,
  sample: SampleFeed | undefined,
  log: Logger,
): Promise<number> {
  const next = result.packet + 1;
  // The database holds the next packet already: the sync goes on from what it holds.
  if (result.continuation?.heldAbove && !result.continuation.gap && !brokenBelow(result)) return EXIT.ok;
  const token = sample ? SAMPLE_TOKEN : config.token;
  if (!token) {
    process.stdout.write('not checked against the live feed (no token): run `livefeed start` with a token\n');
    return EXIT.ok;
  }
  const feed = feedClient({ feedRoot: sample?.feedRoot ?? config.feedUrl, token }, 'status');
  try {
    const latest = await feed.replicationInfo();
    if (latest === null || latest <= next) return EXIT.ok;
    const name = replicationPacketName(next, config.deployment);
    if (await feed.exists(name)) return EXIT.ok;
    const message =
      `the live feed no longer has packet ${next} (${name} answers 404; its latest is ${latest}): the copy would ` +
      `miss packets ${next}..(the feed's oldest packet − 1). Bootstrap from a newer full dump (--dump; see the ` +
      'README, First import)';
    log.error({ event: 'bootstrap-gap', from: next, latest }, message);
    process.stderr.write(`livefeed: ${message}\n`);
    return EXIT.failedFiles;
  } finally {
    await feed.close();
  }
}

/**
 * `livefeed bootstrap [--entities ...] [--dumps-url URL] [--dump NAME] [--demo]`: takes the writer
 * lock and imports the full JSON dumps (sync/bootstrap.ts) with a progress bar on a terminal, then
 * says where the sync continues. With a token (or `--demo`) it checks that the live feed still has
 * the following packet and names the gap if not (exit 1). Ctrl-C stops it; the entity types
 * already stored stay and the next run continues. Into SQLite, or into PostgreSQL when `--db` is a
 * postgres:// URL (bootstrapPostgres.ts, loaded only then). Throws ConfigError, LockHeldError,
 * SignatureError, ArchiveError, feed, SQLite and PostgreSQL errors (src/cli/exit.ts maps them).
 */
export const bootstrapCommand: CommandImplementation = {
  async run({ config, flags }) {
    const dump = flags.dump === undefined ? undefined : String(flags.dump);
    if (dump !== undefined && !isFullDumpName(dump))
      throw new ConfigError(`--dump: not a full dump name (YYYYMMDD-NNN): ${JSON.stringify(dump)}`);
    const log = commandLogger(config);
    const demo = !!flags.demo;
    // Opened first: a database it cannot open stops it before anything starts.
    const target = await bootstrapTarget(config, flags, log);
    let sample: SampleFeed | undefined;
    let dumps: FeedClient | undefined;
    const progress = entityProgress(log);
    try {
      sample = demo ? await startSampleFeed({ root: BUNDLED_FEED_ROOT }) : undefined;
      dumps = feedClient({ feedRoot: sample?.dumpsUrl ?? config.dumpsUrl, token: undefined }, 'fullDumps');
      if (demo) await target.markDemo();
      const stopped = 'bootstrap stopped by a signal: stored entity types stay';
      return await target.withLock(stopped, async (signal) => {
        const verifier = await createVerifier(
          config.signingKey ?? (demo ? BUNDLED_SIGNING_KEY : undefined),
          demo && !config.signingKey ? 'fail' : config.verify,
          log,
          {
            allowWeakSigningKey: config.allowWeakSigningKey,
            allowSha1Signatures: config.allowSha1Signatures,
          },
        );
        const started = Date.now();
        const rewrites = await target.store.feedRewrites();
        const result = await bootstrapFromFullDumps(target.store, {
          dumps: dumps!,
          verifier,
          entities: config.entities,
          dump,
          workDir: join(config.dataDir, 'bootstrap'),
          logger: log,
          signal,
          // Not given, the limit follows each archive's size (sync/bootstrap.ts fullDumpMaxBytes).
          maxBytes: config.given.has('maxDumpBytes') ? config.maxDumpBytes : undefined,
          onEntity: progress.onEntity,
          onProgress: progress.onProgress,
        });
        progress.stop();
        warnRewritten(log, rewrites, await target.store.feedRewrites());
        printSummary(result, (Date.now() - started) / 1000);
        return await checkContinuation(result, config, sample, log);
      });
    } finally {
      progress.stop();
      await dumps?.close();
      await target.close();
      await sample?.close();
    }
  },
};

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, type Flags, loadConfig } from './config.js';
import { openStore } from './db/client.js';
import { FeedClient } from './feed/client.js';
import type { EntityType } from './feed/entities.js';
import { DEFAULT_DUMPS_URL, isFullDumpName } from './feed/fullDumps.js';
import { replicationPacketName, signaturePath } from './feed/protocol/urls.js';
import { createLogger, type Logger } from './logger.js';
import { createProgress, type Progress } from './ops/progress.js';
import { BUNDLED_FEED_ROOT, SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from './samplefeed/server.js';
import { type BootstrapResult, bootstrapFromFullDumps } from './sync/bootstrap.js';
import { acquireWriterLock } from './sync/lock.js';
import { createVerifier } from './sync/verifier.js';

/** Flags of `livefeed bootstrap` beside the shared and sync ones. */
export interface BootstrapFlags extends Flags {
  /** `--dumps-url` (env LIVEFEED_DUMPS_URL). */
  dumpsUrl?: string;
  /** `--dump`: a dump directory name instead of `LATEST`. */
  dump?: string;
  /** `--demo`: bootstrap the demo database from the bundled sample feed's full dump. */
  demo?: boolean;
}

/** Exit code of a bootstrap whose position the live feed no longer continues (see the README). */
export const EXIT_GAP = 1;

const BUNDLED_SIGNING_KEY = fileURLToPath(new URL('../fixtures/keys/test-signing-key.asc', import.meta.url));

/**
 * The full dump directory URL: `--dumps-url`, else `LIVEFEED_DUMPS_URL`, else upstream's.
 * @throws ConfigError naming the source when it is not an http(s) URL.
 */
export function dumpsUrlOf(flags: BootstrapFlags, env: NodeJS.ProcessEnv): string {
  const [value, source] =
    flags.dumpsUrl !== undefined
      ? [flags.dumpsUrl, '--dumps-url']
      : env.LIVEFEED_DUMPS_URL
        ? [env.LIVEFEED_DUMPS_URL, 'LIVEFEED_DUMPS_URL']
        : [DEFAULT_DUMPS_URL, 'default'];
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol)) {
    throw new ConfigError(`${source}: not an http(s) URL: ${JSON.stringify(value)}`);
  }
  return value.replace(/\/+$/, '');
}

/**
 * Runs `livefeed bootstrap [--entities ...] [--dumps-url URL] [--dump NAME] [--demo]`: takes the
 * writer lock and imports the full JSON dumps ({@link bootstrapFromFullDumps}) with a progress bar
 * on a terminal (bytes, lines, rate, ETA), then says where the sync continues. With a token (or
 * `--demo`) it checks that the live feed still has the following packet, and names the gap if not.
 * Ctrl-C stops it; the entity types already stored stay, the next run continues.
 * @returns 0, or {@link EXIT_GAP} when the live feed no longer has the following packet.
 * @throws ConfigError, LockHeldError, SignatureError, ArchiveError, feed and SQLite errors (the CLI maps them).
 */
export async function runBootstrap(
  flags: BootstrapFlags,
  env: NodeJS.ProcessEnv = process.env,
  logger?: Logger,
): Promise<number> {
  const { dumpsUrl: _url, dump, demo, ...shared } = flags;
  const config = loadConfig(shared, env);
  const log = logger ?? createLogger(config.logLevel, { service: 'livefeed' });
  if (dump !== undefined && !isFullDumpName(dump))
    throw new ConfigError(`--dump: not a full dump name (YYYYMMDD-NNN): ${JSON.stringify(dump)}`);
  const sample = demo ? await startSampleFeed({ root: BUNDLED_FEED_ROOT }) : undefined;
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('bootstrap stopped by a signal: stored entity types stay'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const dbPath = demo && !flags.db && !env.LIVEFEED_DB ? join(config.dataDir, 'demo.db') : config.db;
  const store = openStore(dbPath);
  const dumps = new FeedClient({ feedRoot: sample?.dumpsUrl ?? dumpsUrlOf(flags, env) });
  let progress: Progress | undefined;
  try {
    if (demo) store.sqlite.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('demo', 'true')").run();
    const lock = await acquireWriterLock(store, { logger: log, signal: controller.signal });
    try {
      const signingKey = config.signingKey ?? (demo ? BUNDLED_SIGNING_KEY : undefined);
      const verifier = await createVerifier(
        signingKey,
        demo && !config.signingKey ? 'fail' : config.verify,
        log,
        {
          allowWeakSigningKey: config.allowWeakSigningKey,
        },
      );
      const started = Date.now();
      let current: EntityType | undefined;
      let shownMb = 0;
      let entityStarted = started;
      const result = await bootstrapFromFullDumps(store, {
        dumps,
        verifier,
        entities: config.entities,
        dump,
        workDir: join(config.dataDir, 'bootstrap'),
        logger: log,
        signal: AbortSignal.any([controller.signal, lock.lost]),
        maxBytes: config.maxDumpBytes,
        onEntity: ({ entity, skipped }) => {
          progress?.stop();
          progress = undefined;
          if (skipped) process.stdout.write(`${entity}: already stored by an earlier run\n`);
        },
        onProgress: ({ entity, readBytes, totalBytes, lines }) => {
          if (entity !== current || !progress) {
            current = entity;
            progress = createProgress({
              label: `bootstrap ${entity}`,
              total: mb(totalBytes),
              unit: 'MB (xz)',
              logger: log,
            });
            shownMb = 0;
            entityStarted = Date.now();
          }
          const seconds = Math.max(0.001, (Date.now() - entityStarted) / 1000);
          const step = Math.max(0, mb(readBytes) - shownMb);
          shownMb += step;
          progress.tick(step, `${lines} lines, ${Math.round(lines / seconds)} lines/s`);
        },
      });
      progress?.stop();
      printSummary(result, (Date.now() - started) / 1000);
      return await checkContinuation(result, config, sample, log);
    } finally {
      lock.release();
    }
  } finally {
    progress?.stop();
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await dumps.close();
    store.close();
    await sample?.close();
  }
}

const mb = (bytes: number) => Math.ceil(bytes / 1e6);

function printSummary(result: BootstrapResult, seconds: number): void {
  for (const entity of result.imported) {
    process.stdout.write(
      `${entity.entity}: ${entity.changes} entities, ${entity.quarantined} quarantined, ${entity.lines} lines\n`,
    );
  }
  process.stdout.write(
    `bootstrapped full dump ${result.dump} (packet ${result.packet}) in ${seconds.toFixed(1)} s; ` +
      `the sync continues at packet ${result.packet + 1}\n`,
  );
}

/**
 * Asks the live feed (token or demo) whether the packet after the full dumps is still there: if
 * `replication-info` is past it and its signature answers 404, the copy cannot be continued.
 */
async function checkContinuation(
  result: BootstrapResult,
  config: ReturnType<typeof loadConfig>,
  sample: SampleFeed | undefined,
  log: Logger,
): Promise<number> {
  const next = result.packet + 1;
  const token = sample ? SAMPLE_TOKEN : config.token;
  if (!token) {
    process.stdout.write(
      `not checked against the live feed (no token): run \`livefeed start\` with a token\n`,
    );
    return 0;
  }
  const feed = new FeedClient({ feedRoot: sample?.feedRoot ?? config.feedUrl, token });
  try {
    const latest = await feed.replicationInfo();
    if (latest === null || latest < next) return 0;
    const name = replicationPacketName(next, config.deployment);
    if ((await feed.text(signaturePath(name))) !== null) return 0;
    const message =
      `the live feed no longer has packet ${next} (${name} answers 404; its latest is ${latest}): the copy would ` +
      `miss packets ${next}..(the feed's oldest packet − 1). Bootstrap from a newer full dump (--dump; see the ` +
      'README, First import)';
    log.error({ event: 'bootstrap-gap', from: next, latest }, message);
    process.stderr.write(`livefeed: ${message}\n`);
    return EXIT_GAP;
  } finally {
    await feed.close();
  }
}

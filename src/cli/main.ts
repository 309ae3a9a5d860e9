import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { CONFIG_OPTIONS, type Config, ConfigError, type Flags, loadConfig } from '../config.js';
import { openStore, type Store } from '../db/client.js';
import { openForServing } from '../db/readOnly.js';
import { FeedClient } from '../feed/client.js';
import { FeedAuthError, FeedHttpError, FeedNetworkError, safeMessage } from '../feed/errors.js';
import { DEFAULT_FEED_ROOTS, databaseName, redactUrl } from '../feed/protocol/urls.js';
import type { ServiceInfo } from '../graphql/builder.js';
import { createApp } from '../http/app.js';
import { createLogger, type Logger } from '../logger.js';
import { watchCompletedPackets } from '../ops/events.js';
import { createOps, feedClientHooks, instrumentSync, type Ops } from '../ops/wiring.js';
import { BUNDLED_FEED_ROOT, SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../samplefeed/server.js';
import type { SyncContext, SyncReport } from '../sync/context.js';
import { acquireWriterLock, LockHeldError } from '../sync/lock.js';
import { combineObservers } from '../sync/observer.js';
import { createVerifier } from '../sync/verifier.js';
import { follow, syncOnce } from '../sync/worker.js';
import { type ImportFlags, runImport } from './import.js';
import { runStatus } from './status.js';
import { chooseDatabase, noFeedConfigured, requireExistingDatabase } from './targets.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Exit codes of the CLI. */
export const EXIT = {
  ok: 0,
  failedFiles: 1,
  config: 2,
  auth: 3,
  unexpected: 4,
  locked: 5,
  unreachable: 6,
} as const;

/** The feed to sync from: upstream with a token, or the bundled sample feed (demo). */
interface FeedTarget {
  feedRoot: string;
  token: string | undefined;
  demo: boolean;
  sampleFeed?: SampleFeed;
  /** The bundled feed's TEST key, so the demo shows verification at work. */
  signingKey?: string;
}

/** Public half of the TEST key that signs the bundled feed (fixtures/keys/README.md). */
const BUNDLED_SIGNING_KEY = fileURLToPath(
  new URL('../../fixtures/keys/test-signing-key.asc', import.meta.url),
);

function helpText(key: keyof Config): string {
  const option = CONFIG_OPTIONS.find((o) => o.key === key)!;
  return `${option.description} (env ${option.env}; default ${option.default})`;
}

function sharedOptions(command: Command): Command {
  for (const key of ['feedUrl', 'deployment', 'dataDir', 'db', 'logLevel', 'logFormat'] as const) {
    const option = CONFIG_OPTIONS.find((o) => o.key === key)!;
    command.addOption(new Option(option.flag!, helpText(key)));
  }
  return command.addHelpText(
    'after',
    `\nThe upstream token comes from LIVEFEED_TOKEN or the file named by LIVEFEED_TOKEN_FILE (never a flag).`,
  );
}

function syncOptions(command: Command): Command {
  command.option('--once', 'exit when caught up (exit 0; 1 when a file failed) instead of following');
  command.option('--demo', 'sync the bundled sample feed (what start does without a token)');
  command.option('--wait', "wait while another sync holds the database's writer lock (default: exit 5)");
  for (const key of [
    'from',
    'to',
    'entities',
    'pollIntervalMs',
    'settleAfterMs',
    'replicationPackets',
    'skipPackets',
    'signingKey',
    'verify',
    'maxDumpBytes',
    'keepFiles',
    'acceptUnsigned',
    'allowWeakSigningKey',
  ] as const) {
    const option = CONFIG_OPTIONS.find((o) => o.key === key)!;
    command.addOption(new Option(option.flag!, helpText(key)));
  }
  return command;
}

function serveOptions(command: Command): Command {
  for (const key of ['port', 'host', 'freshnessWarningMs', 'freshnessCriticalMs'] as const) {
    const option = CONFIG_OPTIONS.find((o) => o.key === key)!;
    command.addOption(new Option(option.flag!, helpText(key)));
  }
  return command;
}

/** Resolves the feed: without a token and with the default feed root, starts the bundled demo feed. */
async function feedTarget(
  config: Config,
  logger: Logger,
  allowDemo: boolean,
  demo: boolean,
): Promise<FeedTarget> {
  if (!demo && !noFeedConfigured(config)) {
    return { feedRoot: config.feedUrl, token: config.token, demo: false };
  }
  if (!allowDemo) {
    throw new ConfigError(
      'no upstream token: set LIVEFEED_TOKEN or LIVEFEED_TOKEN_FILE (or --feed-url to a feed that needs none)',
    );
  }
  const sampleFeed = await startSampleFeed({ root: BUNDLED_FEED_ROOT, host: '127.0.0.1', port: 0 });
  logger.warn(
    { event: 'demo', feedRoot: sampleFeed.feedRoot },
    'DEMO MODE: no upstream token (LIVEFEED_TOKEN / LIVEFEED_TOKEN_FILE) given, so livefeed syncs the bundled sample feed on loopback. Set a token to sync MusicBrainz.',
  );
  return {
    feedRoot: sampleFeed.feedRoot,
    token: SAMPLE_TOKEN,
    demo: true,
    sampleFeed,
    signingKey: config.signingKey ?? BUNDLED_SIGNING_KEY,
  };
}

function serviceInfo(config: Config, target: FeedTarget): ServiceInfo {
  return {
    demo: target.demo,
    deployment: config.deployment,
    feedRoot: redactUrl(target.feedRoot),
    database: databaseName(target.feedRoot),
    version: VERSION,
    entities: config.entities,
  };
}

async function syncContext(
  config: Config,
  target: FeedTarget,
  store: Store,
  logger: Logger,
  signal: AbortSignal,
  ops: Ops,
): Promise<SyncContext> {
  const client = new FeedClient({
    feedRoot: target.feedRoot,
    token: target.token,
    ...feedClientHooks(ops, logger),
  });
  return {
    store,
    client,
    // The demo verifies with the bundled TEST key unless a key was configured.
    verifier: await createVerifier(
      target.signingKey ?? config.signingKey,
      target.signingKey && !config.signingKey ? 'fail' : config.verify,
      logger,
      { acceptUnsigned: config.acceptUnsigned, allowWeakSigningKey: config.allowWeakSigningKey },
    ),
    logger,
    entities: config.entities,
    deployment: config.deployment,
    dataDir: config.dataDir,
    settleAfterMs: config.settleAfterMs,
    replicationPackets: config.replicationPackets,
    skipPackets: new Set(config.skipPackets),
    signal,
    maxDumpBytes: config.maxDumpBytes,
    keepFiles: config.keepFiles,
  };
}

/**
 * Client the HTTP server uses to fetch files no longer kept locally (the token is added server side,
 * never shown); undefined without upstream access (no token for the default upstream feed root).
 */
function upstreamClient(config: Config, target: FeedTarget, logger: Logger): FeedClient | undefined {
  // `serve --demo` has no sample feed running: files it does not hold are gone.
  if (target.demo && !target.sampleFeed) return undefined;
  const token = target.token ?? config.token;
  if (!token && !target.demo && config.feedUrl === DEFAULT_FEED_ROOTS[config.deployment]) return undefined;
  return new FeedClient({
    feedRoot: target.feedRoot,
    token,
    // Someone waits for the answer: one quick retry, not the sync's patient schedule.
    retry: { attempts: 2 },
    onRetry: (info) =>
      logger.warn({ event: 'retry', ...info }, `retrying ${info.url} in ${info.delayMs} ms: ${info.reason}`),
  });
}

function summarize(report: SyncReport, logger: Logger): number {
  for (const problem of report.problems) {
    process.stderr.write(`livefeed: packet ${problem.packet}: ${problem.file}: ${problem.reason}\n`);
  }
  if (report.quarantined > 0) {
    process.stderr.write(
      `livefeed: ${report.quarantined} malformed line(s) quarantined (GraphQL: quarantine { nodes { packet entity line reason } })\n`,
    );
  }
  logger.info(
    {
      event: 'sync-done',
      latest: report.latest,
      pending: report.pending,
      failed: report.problems.length,
      quarantined: report.quarantined,
    },
    'sync caught up',
  );
  return report.problems.length > 0 ? EXIT.failedFiles : EXIT.ok;
}

/** Listens on the configured address; resolves with GraphiQL's URL once it does. */
async function listen(server: Server, config: Config, logger: Logger, demo: boolean): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info(
    { event: 'listening', host: config.host, port, demo },
    `GraphQL on http://${config.host}:${port}/graphql${demo ? ' (demo data)' : ''}`,
  );
  return `http://${config.host}:${port}/graphql`;
}

/**
 * `start`: says where GraphiQL is once more after the first sync pass, so the URL is the last line
 * on the terminal once the data is there, not scrolled away by the pass's log lines.
 */
function announceWhenSynced(ctx: SyncContext, url: string, logger: Logger, demo: boolean): SyncContext {
  let announced = false;
  const ready = {
    passFinished: () => {
      if (announced) return;
      announced = true;
      logger.info({ event: 'ready', url, demo }, `GraphiQL: ${url}${demo ? ' (demo data)' : ''}`);
    },
  };
  return { ...ctx, observer: combineObservers(ctx.observer, ready) };
}

/** Aborts on SIGINT/SIGTERM so long work stops cleanly (current transaction finished or rolled back). */
function shutdownSignal(logger: Logger): AbortController {
  const controller = new AbortController();
  const stop = (signal: string) => {
    if (controller.signal.aborted) process.exit(130);
    logger.info({ event: 'shutdown', signal }, 'stopping');
    controller.abort(new Error(`stopped by ${signal}`));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return controller;
}

type Mode = 'sync' | 'serve' | 'start';

async function run(mode: Mode, flags: Flags): Promise<number> {
  const config = loadConfig(flags);
  secretToken = config.token;
  const logger = createLogger(config.logLevel, { service: 'livefeed' }, config.logFormat);
  const controller = shutdownSignal(logger);
  const database = chooseDatabase(mode, config, flags);
  if (mode === 'serve') requireExistingDatabase(database);
  const target: FeedTarget =
    mode === 'serve'
      ? { feedRoot: config.feedUrl, token: undefined, demo: database.demo }
      : await feedTarget(config, logger, mode === 'start' || !!flags.demo, !!flags.demo);
  const dbPath = database.path;
  const ops = createOps({ version: VERSION, deployment: config.deployment, demo: target.demo });
  const stores: Store[] = [];
  const open = () => {
    const store = openStore(dbPath);
    stores.push(store);
    return store;
  };
  let server: Server | undefined;
  let graphiqlUrl: string | undefined;
  try {
    if (target.demo && mode !== 'serve')
      open().sqlite.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('demo', 'true')").run();
    if (mode !== 'sync') {
      // `serve` only reads: a database it cannot write (read-only mount) is opened read-only.
      const appStore = mode === 'serve' ? openForServing(dbPath) : open();
      if (mode === 'serve') stores.push(appStore);
      if (appStore.readOnly)
        logger.warn(
          { event: 'read-only', db: dbPath, reason: appStore.readOnly },
          `serving ${dbPath} read-only: ${appStore.readOnly}`,
        );
      const app = createApp({
        store: appStore,
        service: serviceInfo(config, target),
        logger,
        dataDir: config.dataDir,
        corsOrigins: config.corsOrigins,
        mirrorTokens: config.mirrorTokens,
        upstream: upstreamClient(config, target, logger),
        metrics: ops.metrics,
        events: ops.events,
        freshness: { warningMs: config.freshnessWarningMs, criticalMs: config.freshnessCriticalMs },
      });
      // `serve` has no sync in the process: subscriptions learn of completed packets from the database.
      if (mode === 'serve') {
        watchCompletedPackets(appStore, ops.events, {
          signal: controller.signal,
          onError: (error) =>
            logger.warn(
              { event: 'watch-failed', err: safeMessage(error) },
              'cannot check for synced packets',
            ),
        });
      }
      server = createServer(app.handle);
      graphiqlUrl = await listen(server, config, logger, target.demo);
    }
    if (mode === 'serve') {
      await new Promise<void>((resolve) =>
        controller.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      return EXIT.ok;
    }
    const syncStore = open();
    // One writer per database (src/sync/lock.ts); a lost lock stops this sync like a signal.
    const lock = await acquireWriterLock(syncStore, { wait: config.wait, logger, signal: controller.signal });
    try {
      const signal = AbortSignal.any([controller.signal, lock.lost]);
      const instrumented = instrumentSync(
        await syncContext(config, target, syncStore, logger, signal, ops),
        ops,
        logger,
      );
      const ctx = graphiqlUrl
        ? announceWhenSynced(instrumented, graphiqlUrl, logger, target.demo)
        : instrumented;
      if (config.once) return summarize(await syncOnce(ctx, config), logger);
      await follow(ctx, { pollIntervalMs: config.pollIntervalMs, from: config.from, to: config.to });
      return EXIT.ok;
    } finally {
      lock.release();
    }
  } finally {
    server?.closeAllConnections();
    server?.close();
    await target.sampleFeed?.close();
    for (const store of stores) store.close();
  }
}

/** The upstream token once configured, so that even an unexpected error message cannot print it. */
let secretToken: string | undefined;

function report(error: unknown): number {
  if (error instanceof ConfigError) {
    process.stderr.write(`livefeed: ${error.message}\n`);
    return EXIT.config;
  }
  if (error instanceof FeedAuthError) {
    process.stderr.write(`livefeed: ${safeMessage(error, secretToken)}\n`);
    return EXIT.auth;
  }
  if (error instanceof LockHeldError) {
    process.stderr.write(`livefeed: ${error.message}\n`);
    return EXIT.locked;
  }
  if (error instanceof FeedNetworkError || (error instanceof FeedHttpError && error.status >= 500)) {
    process.stderr.write(
      `livefeed: the feed is unreachable: ${safeMessage(error, secretToken)} (check --feed-url and the network; README, Exit codes)\n`,
    );
    return EXIT.unreachable;
  }
  if ((error as Error)?.name === 'AbortError' || /stopped by SIG/.test(String((error as Error)?.message)))
    return EXIT.ok;
  process.stderr.write(`livefeed: ${safeMessage(error, secretToken)}\n`);
  return EXIT.unexpected;
}

/** Builds the `livefeed` command line program. */
export function program(): Command {
  const root = new Command('livefeed')
    .description(
      'Keeps a verified local copy of the MusicBrainz live data feed in SQLite and serves it over GraphQL.',
    )
    .version(VERSION)
    // Usage errors (unknown flag, missing argument) are configuration errors: exit 2, not 1.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.config));
  const action = (mode: Mode) => async (options: Flags) => {
    // Exit as soon as the work is stopped: idle keep-alive sockets, a server-sent events stream or
    // a page still compressing would otherwise hold the process for seconds after SIGTERM. Logs and
    // messages are written synchronously (stderr), so nothing is lost.
    process.exit(await run(mode, options).catch(report));
  };
  sharedOptions(
    syncOptions(
      root.command('sync').description('catch up from the feed into the database; follow unless --once'),
    ),
  ).action(action('sync'));
  sharedOptions(
    serveOptions(
      root
        .command('serve')
        .description('serve GraphQL (GraphiQL for browsers) on /graphql from a database a sync wrote')
        .option('--demo', 'serve the demo database (<data-dir>/demo.db, what start syncs without a token)'),
    ),
  ).action(action('serve'));
  sharedOptions(
    serveOptions(
      syncOptions(
        root
          .command('start')
          .description('sync (following) and serve in one process; a demo without a token'),
      ),
    ),
  ).action(action('start'));
  sharedOptions(
    root
      .command('status')
      .description('print the local and upstream position, unfinished files and freshness on one screen')
      .option('--offline', 'do not ask upstream; show the position the sync last recorded')
      .option('--demo', 'look at the demo database (what start uses without a token)'),
  ).action(async (options: Flags) => {
    process.exitCode = await runStatus(options).catch(report);
  });
  sharedOptions(
    root
      .command('import <file>')
      .description('load a local JSON dump (hourly or full, <entity>.tar.xz) through the sync pipeline')
      .requiredOption('--packet <n>', "the dump's packet (its REPLICATION_SEQUENCE must equal it)")
      .option('--entity <type>', 'entity type (default: from the member mbdump/<entity>)'),
  ).action(async (file: string, options: ImportFlags) => {
    process.exitCode = await runImport(file, options).catch(report);
  });
  root
    .command('sample-feed')
    .description(`serve the bundled sample feed (token ${SAMPLE_TOKEN})`)
    .option('--port <port>', 'port (env LIVEFEED_SAMPLE_FEED_PORT; default 8080)')
    .option('--host <host>', 'address (default 127.0.0.1)')
    .option('--root <dir>', 'folder laid out like the feed root (default: the bundled feed)')
    .action(async (options: { port?: string; host?: string; root?: string }) => {
      const feed = await startSampleFeed({
        root: options.root ?? BUNDLED_FEED_ROOT,
        host: options.host ?? '127.0.0.1',
        port: Number(options.port ?? process.env.LIVEFEED_SAMPLE_FEED_PORT ?? 8080),
      });
      process.stdout.write(`sample feed at ${feed.feedRoot} (token ${SAMPLE_TOKEN})\n`);
      const stop = () => void feed.close();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  return root;
}

await program().parseAsync(process.argv);

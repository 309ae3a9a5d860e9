/**
 * The one place that decides, for every command, which feed it talks to (upstream with a token, or
 * the bundled sample feed for the demo), how patient its feed clients are, and which database it
 * works on.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Config,
  ConfigError,
  type Flags,
  isPostgresUrl,
  postgresConnectionString,
  redactDatabaseUrl,
  replicaConnections,
} from '../config.js';
import type { PostgresConnection } from '../db/postgres/client.js';
import { FeedClient, type FeedClientOptions } from '../feed/client.js';
import { DEFAULT_FEED_ROOTS } from '../feed/protocol/urls.js';
import type { Logger } from '../logger.js';
import { feedClientHooks, type Ops } from '../ops/wiring.js';
import { BUNDLED_FEED_ROOT, SAMPLE_TOKEN } from '../samplefeed/bundled.js';
import type { SampleFeed } from '../samplefeed/server.js';
import type { SyncContext } from '../sync/context.js';
import type { SyncStore } from '../sync/syncStore.js';

/** The feed to sync from: upstream with a token, or the bundled sample feed (demo). */
export interface FeedTarget {
  feedRoot: string;
  token: string | undefined;
  demo: boolean;
  sampleFeed?: SampleFeed;
  /** The bundled feed's TEST key, so the demo shows verification at work. */
  signingKey?: string;
}

/** Public half of the TEST key that signs the bundled feed (fixtures/keys/README.md). */
export const BUNDLED_SIGNING_KEY = fileURLToPath(
  new URL('../../fixtures/keys/test-signing-key.asc', import.meta.url),
);

/** True when neither a token nor a feed root of one's own is configured: `start` runs the demo. */
export function noFeedConfigured(config: Config): boolean {
  return !config.token && config.feedUrl === DEFAULT_FEED_ROOTS[config.deployment];
}

/**
 * Resolves the feed: upstream unless `demo` or nothing is configured; then the bundled sample feed,
 * started on loopback, when `allowDemo`.
 * @throws ConfigError (exit 2) when there is no token and the demo is not allowed (`sync`).
 */
export async function feedTarget(
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
      'no upstream token: set LIVEFEED_TOKEN or LIVEFEED_TOKEN_FILE (or --feed-url to a feed that needs none), ' +
        'or pass --demo to sync the bundled sample feed (README, Quick start)',
    );
  }
  // Loaded only for the demo: the sample feed's server is not needed to sync from upstream.
  const { startSampleFeed } = await import('../samplefeed/server.js');
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

/**
 * How patient a feed client is, by who waits for it. The sync keeps FeedClient's own schedule
 * (retries with backoff over minutes); a person waiting for an answer gets one quick retry.
 */
export const CLIENT_POLICIES = {
  /** The sync: FeedClient's default retries and timeouts. */
  sync: {},
  /**
   * `bootstrap`'s full dumps: the sync's policy, and every kept byte resumes in a later run (files
   * of gigabytes, feed/partial.ts), not only files of a megabyte or more. Their host is a plain web
   * server: its 404 for a missing file is an HTML page, not a route miss.
   */
  fullDumps: { sidecarMinBytes: 0, routeMissPages: false },
  /** The HTTP server fetching a file no longer kept locally while its client waits. */
  onDemand: { retry: { attempts: 2 } },
  /** `livefeed status` asking replication-info: one quick retry, 10 s per request. */
  status: { retry: { attempts: 2 }, timeoutMs: 10_000 },
} satisfies Record<string, Partial<FeedClientOptions>>;

/** The feed client of `target` with a named policy and the caller's retry/fetch hooks. */
export function feedClient(
  target: { feedRoot: string; token: string | undefined },
  policy: keyof typeof CLIENT_POLICIES,
  hooks: Pick<FeedClientOptions, 'onRetry' | 'onFetched'> = {},
): FeedClient {
  return new FeedClient({
    feedRoot: target.feedRoot,
    token: target.token,
    ...CLIENT_POLICIES[policy],
    ...hooks,
  });
}

/**
 * Client the HTTP server uses to fetch files no longer kept locally (the token is added server side,
 * never shown); undefined without upstream access (no token for the default upstream feed root).
 */
export function upstreamClient(config: Config, target: FeedTarget, logger: Logger): FeedClient | undefined {
  // `serve --demo` has no sample feed running: files it does not hold are gone.
  if (target.demo && !target.sampleFeed) return undefined;
  const token = target.token ?? config.token;
  if (!token && !target.demo && config.feedUrl === DEFAULT_FEED_ROOTS[config.deployment]) return undefined;
  return feedClient({ feedRoot: target.feedRoot, token }, 'onDemand', {
    onRetry: (info) =>
      logger.warn({ event: 'retry', ...info }, `retrying ${info.url} in ${info.delayMs} ms: ${info.reason}`),
  });
}

/**
 * The sync's context for `target`: its feed client (policy `sync`, counted by the process's
 * metrics), the verifier (the demo's TEST key unless a key is configured) and the sync options.
 * @throws WeakSigningKeyError (exit 2) for a weak signing key; Error naming the key file when it
 *   cannot be loaded.
 */
export async function syncContext(
  config: Config,
  target: FeedTarget,
  store: SyncStore,
  logger: Logger,
  signal: AbortSignal,
  ops: Ops,
): Promise<SyncContext> {
  const client = feedClient(target, 'sync', feedClientHooks(ops, logger));
  // The demo verifies with the bundled TEST key unless a key was configured. Loaded here, not by
  // the commands that only read the feed (`status`): openpgp alone takes about 40 ms to load.
  const { createVerifier } = await import('../sync/verifier.js');
  const verifier = await createVerifier(
    target.signingKey ?? config.signingKey,
    target.signingKey && !config.signingKey ? 'fail' : config.verify,
    logger,
    {
      acceptUnsigned: config.acceptUnsigned,
      allowWeakSigningKey: config.allowWeakSigningKey,
      allowSha1Signatures: config.allowSha1Signatures,
      operator: config.operator,
    },
  );
  return {
    feed: {
      client,
      verifier,
      deployment: config.deployment,
      dataDir: config.dataDir,
      maxDumpBytes: config.maxDumpBytes,
    },
    store,
    policy: {
      entities: config.entities,
      settleAfterMs: config.settleAfterMs,
      replicationPackets: config.replicationPackets,
      skipPackets: new Set(config.skipPackets),
      keepFiles: config.keepFiles,
      keepHistory: config.keepHistory,
    },
    observe: { logger },
    signal,
  };
}

/** The commands that open a database. */
export type DatabaseCommand = 'sync' | 'serve' | 'start' | 'status' | 'import' | 'bootstrap';

/** Which database a command works on, decided once for every command. */
export interface DatabaseChoice {
  kind: 'sqlite';
  /** The SQLite file. */
  path: string;
  /** True when the command works on the demo (the bundled sample feed's data). */
  demo: boolean;
}

/** A PostgreSQL database to work on: how to connect, and its name as messages show it. */
export interface PostgresChoice {
  kind: 'postgres';
  connection: PostgresConnection;
  /**
   * The read replicas of `--db-replica` / `LIVEFEED_DB_REPLICA` (serving commands only; empty
   * otherwise), for db/postgres/replicaReads.ts openPostgresReads.
   */
  replicas: PostgresConnection[];
}

/**
 * The PostgreSQL database when `--db` / `LIVEFEED_DB` is a `postgres://` URL (every database
 * command works on it), with the password of `LIVEFEED_DB_PASSWORD_FILE` put in; undefined for a
 * SQLite file.
 */
export function choosePostgres(config: Config): PostgresChoice | undefined {
  if (!isPostgresUrl(config.db)) return undefined;
  const display = redactDatabaseUrl(config.db);
  return {
    kind: 'postgres',
    connection: { connectionString: postgresConnectionString(config.db, config.dbPassword), display },
    replicas: replicaConnections(config.dbReplicas, config.dbPassword),
  };
}

/**
 * Decides the SQLite database of `command`: `--db` or `LIVEFEED_DB` when given; otherwise
 * `<data-dir>/demo.db` for the demo and `<data-dir>/livefeed.db` for everything else. The demo is
 * chosen only by `--demo`, or by `start` falling back to it without a token and feed root.
 * @param config the loaded configuration (its `db` holds the flag, env or default value)
 * @param flags commander options of the command (`demo`)
 * @throws ConfigError (exit 2) when `--db` is a PostgreSQL URL: commands call {@link choosePostgres}
 *   first, so this is a command that forgot to.
 */
export function chooseDatabase(command: DatabaseCommand, config: Config, flags: Flags): DatabaseChoice {
  if (isPostgresUrl(config.db))
    throw new ConfigError(`livefeed ${command} chose its database as SQLite, but --db is a PostgreSQL URL`);
  const demo = !!flags.demo || (command === 'start' && noFeedConfigured(config));
  const path = demo && !config.given.has('db') ? join(config.dataDir, 'demo.db') : config.db;
  return { kind: 'sqlite', path, demo };
}

/**
 * Refuses to serve a database that does not exist (a typo in `--db` must not serve an empty one).
 * @throws ConfigError (exit 2) saying to run `livefeed sync` first or pass `--demo`
 */
export function requireExistingDatabase(choice: DatabaseChoice): void {
  if (existsSync(choice.path)) return;
  const hint = choice.demo
    ? 'run `livefeed sync --demo --once` (or `livefeed start` without a token) first'
    : 'run `livefeed sync` first (with LIVEFEED_TOKEN, and --db or LIVEFEED_DB if it lives elsewhere), or try the demo: `livefeed start` without a token, or `serve --demo` after `sync --demo --once`';
  throw new ConfigError(`no database at ${choice.path}: ${hint}`);
}

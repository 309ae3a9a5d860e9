import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openStore, type Store } from '../../src/db/client.js';
import { FeedClient } from '../../src/feed/client.js';
import { ENTITY_TYPES, type EntityType } from '../../src/feed/entities.js';
import type { ServiceInfo } from '../../src/graphql/builder.js';
import { type App, createApp } from '../../src/http/app.js';
import type { Logger } from '../../src/logger.js';
import { SAMPLE_TOKEN } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { sqliteSyncStore } from '../../src/sync/sqliteSyncStore.js';
import type { SqliteSyncStore, SyncStore } from '../../src/sync/syncStore.js';
import { createVerifier, type Verifier } from '../../src/sync/verifier.js';

/** A fresh temporary folder; `cleanup` removes it. */
export async function tempDir(prefix = 'livefeed-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A logger that writes nothing, or collects lines into `lines` when given. */
export function testLogger(lines?: string[]): Logger {
  if (!lines) return pino({ level: 'silent' });
  return pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
}

/** Options of {@link syncContext}. */
export interface TestSyncOptions {
  feedRoot: string;
  dataDir: string;
  token?: string;
  entities?: readonly EntityType[];
  replicationPackets?: boolean;
  verifier?: Verifier;
  logger?: Logger;
  settleAfterMs?: number;
  now?: () => Date;
  deployment?: 'production' | 'test';
  signal?: AbortSignal;
}

/** A sync context over a real SQLite file in `dataDir` and a real HTTP feed; retries are fast. */
export async function syncContext(
  options: TestSyncOptions,
): Promise<SyncContext & { store: SqliteSyncStore }> {
  const store = sqliteSyncStore(openStore(join(options.dataDir, 'livefeed.db')));
  return { ...(await syncContextOn(store, options)), store };
}

/** A sync context over `store` (SQLite or PostgreSQL, test/support/stores.ts) and a real HTTP feed. */
export async function syncContextOn(store: SyncStore, options: TestSyncOptions): Promise<SyncContext> {
  const logger = options.logger ?? testLogger();
  return {
    feed: {
      client: new FeedClient({
        feedRoot: options.feedRoot,
        token: options.token ?? SAMPLE_TOKEN,
        retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 },
        timeoutMs: 5000,
      }),
      verifier: options.verifier ?? (await createVerifier(undefined, 'off', logger)),
      deployment: options.deployment ?? 'production',
      dataDir: options.dataDir,
    },
    store,
    policy: {
      entities: options.entities ?? ENTITY_TYPES,
      settleAfterMs: options.settleAfterMs ?? 2 * 3_600_000,
      replicationPackets: options.replicationPackets ?? false,
      skipPackets: new Set(),
    },
    observe: { logger },
    now: options.now,
    signal: options.signal,
  };
}

/** Service facts for test apps. */
export function testService(overrides: Partial<ServiceInfo> = {}): ServiceInfo {
  return {
    demo: false,
    deployment: 'production',
    feedRoot: 'http://127.0.0.1/api/musicbrainz',
    database: 'musicbrainz',
    version: 'test',
    entities: ENTITY_TYPES,
    ...overrides,
  };
}

/** The app over a store (reader connection of its own on the same file). */
export function testApp(
  dbPath: string,
  dataDir: string,
  service: Partial<ServiceInfo> = {},
): App & { store: Store } {
  const store = openStore(dbPath);
  return { ...createApp({ store, service: testService(service), logger: testLogger(), dataDir }), store };
}

/** A GraphQL answer; `data` is loosely typed so tests can walk it. */
// biome-ignore lint/suspicious/noExplicitAny: test answers are walked field by field
export interface GqlResult<T = Record<string, any>> {
  data?: T;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Runs a GraphQL query in-process through `yoga.fetch`. */
// biome-ignore lint/suspicious/noExplicitAny: as above
export async function gql<T = Record<string, any>>(
  app: Pick<App, 'yoga'>,
  query: string,
  variables?: Record<string, unknown>,
): Promise<GqlResult<T>> {
  const response = await app.yoga.fetch('http://livefeed.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as GqlResult<T>;
}

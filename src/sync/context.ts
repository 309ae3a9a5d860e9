import type { FeedClient } from '../feed/client.js';
import type { EntityType } from '../feed/entities.js';
import type { Deployment } from '../feed/protocol/urls.js';
import type { KeepFiles } from '../files/retentionPolicy.js';
import type { Logger } from '../logger.js';
import type { SyncObserver } from './observer.js';
import type { Prefetcher } from './prefetch.js';
import type { SyncStore } from './syncStore.js';
import type { Verifier } from './verifier.js';

/**
 * Where a sync's files come from and how they are checked: the feed client, the signature
 * verifier, the deployment (which names replication packets), the data directory holding `tmp/`
 * downloads and kept archives under `files/`, and the archive size limit.
 */
export interface SyncFeed {
  client: FeedClient;
  verifier: Verifier;
  deployment: Deployment;
  dataDir: string;
  /** Most decompressed bytes of one archive (`--max-dump-bytes`); default readJsonDump's. */
  maxDumpBytes?: number;
}

/** What a sync covers and how it retries. Durations in milliseconds. */
export interface SyncPolicy {
  /** Entity types whose JSON dumps are tracked (`--entities`). */
  entities: readonly EntityType[];
  /** Time-based settling (`--settle-after`), or null: only a later packet's JSON dump settles. */
  settleAfterMs: number | null;
  /** Whether replication packets are fetched too (`--replication-packets`). */
  replicationPackets: boolean;
  /** Packets whose replication packet is not fetched (`--skip-packets`). */
  skipPackets: ReadonlySet<number>;
  /** Retention of kept archives, applied after each pass (`--keep-files`); default keep all. */
  keepFiles?: KeepFiles;
  /** `--keep-history`: prune history outside the window at the end of each pass (sync/prune.ts). */
  keepHistory?: KeepFiles;
  /**
   * Leave FAILED files (and PENDING or MISSING replication packets) alone until their
   * `next_retry_at` (follow mode sets it; `--once` asks for all at once).
   */
  deferFailed?: boolean;
}

/** Who hears about a sync: its log, and the hooks metrics, progress bars and subscriptions use. */
export interface SyncWatchers {
  logger: Logger;
  /** Told about passes, packets and stored dumps (metrics, progress bars). */
  observer?: SyncObserver;
  /** Told when a packet becomes complete (GraphQL subscriptions, metrics). */
  onPacketSynced?: (packet: number) => void;
}

/** Everything a sync needs, by concern. */
export interface SyncContext {
  feed: SyncFeed;
  /** The writer's database: SQLite (sqliteSyncStore.ts) or PostgreSQL (postgres/syncStore.ts). */
  store: SyncStore;
  policy: SyncPolicy;
  observe: SyncWatchers;
  /** Stops the sync (SIGTERM, a lost writer lock). */
  signal?: AbortSignal;
  /** The clock; tests pass their own. Default `new Date()`. */
  now?: () => Date;
  /** Downloads begun ahead of their turn during a pass (prefetch.ts); set by the pass. */
  prefetch?: Prefetcher;
}

/** A file the sync could not store, with the reason (packet and file named). */
export interface SyncProblem {
  packet: number;
  file: string;
  reason: string;
}

/** Outcome of one pass over the feed. */
export interface SyncReport {
  latest: number | null;
  from: number | null;
  to: number | null;
  dumpsStored: number;
  completed: number[];
  /**
   * Complete packets announced again: what they lacked (a MISSING replication packet, a dump settled
   * by time) was stored or settled on evidence in this pass (SyncStore.restampComplete).
   */
  reannounced: number[];
  pending: number;
  problems: SyncProblem[];
  /** Malformed lines quarantined by the dumps stored in this pass. */
  quarantined: number;
  /** FAILED files not tried because their next retry time had not come (follow mode). */
  deferred: number;
}

import type { Store } from '../db/client.js';
import type { FeedClient } from '../feed/client.js';
import type { EntityType } from '../feed/entities.js';
import type { Deployment } from '../feed/protocol/urls.js';
import type { KeepFiles } from '../files/retentionPolicy.js';
import type { Logger } from '../logger.js';
import type { SyncObserver } from './observer.js';
import type { Verifier } from './verifier.js';

/** Everything a sync needs. Durations in milliseconds. */
export interface SyncContext {
  store: Store;
  client: FeedClient;
  verifier: Verifier;
  logger: Logger;
  entities: readonly EntityType[];
  deployment: Deployment;
  dataDir: string;
  /** Time-based settling (`--settle-after`), or null: only a later packet's JSON dump settles. */
  settleAfterMs: number | null;
  replicationPackets: boolean;
  skipPackets: ReadonlySet<number>;
  signal?: AbortSignal;
  now?: () => Date;
  /** Told when a packet becomes complete (GraphQL subscriptions, metrics). */
  onPacketSynced?: (packet: number) => void;
  /** Told about passes, packets and stored dumps (metrics, progress bars). */
  observer?: SyncObserver;
  /** Most decompressed bytes of one archive (`--max-dump-bytes`); default readJsonDump's. */
  maxDumpBytes?: number;
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
  pending: number;
  problems: SyncProblem[];
  /** Malformed lines quarantined by the dumps stored in this pass. */
  quarantined: number;
  /** FAILED files not tried because their next retry time had not come (follow mode). */
  deferred: number;
}

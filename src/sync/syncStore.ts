import type { Store } from '../db/client.js';
import type { FeedRewrite } from '../db/feedRewrites.js';
import type { EntityType } from '../feed/entities.js';
import type { KeepFiles } from '../files/retentionPolicy.js';
import type { Logger } from '../logger.js';
import type { FailureRecord } from './fileRecords.js';
import type { FileKey } from './fileRow.js';
import type { IngestJsonDumpOptions, IngestResult } from './ingest.js';
import type { KeepHistory, PruneResult } from './prune.js';
import type { StoredReplicationPacket, StoreReplicationOptions } from './replication.js';
import type { RetentionResult } from './retention.js';
import type { DumpStatus, PendingDump, SettledBy } from './state.js';

/**
 * What the sync writer does to its database, named as async operations (issue 17,
 * docs/POSTGRES_PORT.md "The storage interface"), with two implementations: SQLite
 * (sqliteSyncStore.ts, today's synchronous functions in resolved promises, the ingest's fast path
 * unchanged) and PostgreSQL (sync/postgres/syncStore.ts, loaded only for a postgres:// database).
 * Times are ISO 8601 text or Dates as the functions they name say; packets are replication sequences.
 */

/** Stores a JSON dump in one transaction (sync/ingest.ts on SQLite, sync/postgres/ingest.ts on PostgreSQL). */
export interface DumpWriter {
  /** @throws ArchiveError, the abort reason or a database error; nothing of the dump is stored then. */
  ingestDump(options: IngestJsonDumpOptions): Promise<IngestResult>;
}

/** The records of archives not stored (sync/fileRecords.ts, signatureMissing.ts). */
export interface FileRecords {
  /** A 404 for a JSON dump: PENDING until its packet settles (FEED.md, Errors). `now`: ISO 8601. */
  markPending(packet: number, entity: EntityType, now: string): Promise<void>;
  /**
   * FAILED with `reason`, one more attempt and the next retry time; a MISSING replication packet
   * stays MISSING, and a complete packet whose file is now FAILED is reopened, in the same
   * transaction (see fileRecords.ts recordFailure).
   */
  recordFailure(file: FileKey, reason: string, now: Date, error?: unknown): Promise<FailureRecord>;
  /** True when follow mode leaves the file alone until its `next_retry_at` (fileRecords.ts retryDeferred). */
  retryDeferred(file: FileKey, now: Date): Promise<boolean>;
}

/** Where the packets stand, and settling (sync/state.ts, db/status.ts, db/latestPacket.ts). */
export interface PacketState {
  dumpStatus(packet: number, entity: EntityType): Promise<DumpStatus | undefined>;
  /** PENDING dumps of packets in [from, to] with their settling evidence. */
  pendingDumps(from: number, to: number): Promise<PendingDump[]>;
  /** PENDING → NO_CHANGES, recording what settled it. `now`: ISO 8601. */
  markNoChanges(packet: number, entity: EntityType, by: SettledBy, now: string): Promise<void>;
  /**
   * Why a PENDING dump stays PENDING although a later packet's dump was seen (upstream no longer
   * holds its hour: sync/hourHeld.ts), shown as its `error` until its next 404. `now`: ISO 8601.
   */
  explainPending(packet: number, entity: EntityType, reason: string, now: string): Promise<void>;
  /**
   * A probe found a JSON dump of `packet` upstream, of an entity type the sync does not track
   * (sync/evidence.ts): evidence for the 404s of earlier packets. `at`: ISO 8601; the first counts.
   */
  markDumpsSeen(packet: number, at: string): Promise<void>;
  /** NO_CHANGES dumps settled by time for which a later packet's JSON dump has since been seen. */
  timeSettledWithEvidence(): Promise<{ packet: number; entity: EntityType }[]>;
  /**
   * Completes the packets of the range whose files are all terminal and moves the latest-packet
   * mark in the same transaction; resolves to the packets completed now (state.ts completePackets).
   */
  completePackets(
    range: { from: number; to: number },
    entities: readonly EntityType[],
    requireReplication: (packet: number) => boolean,
    now: string,
  ): Promise<number[]>;
  /**
   * A complete packet whose missing part was stored or settled on evidence is announced again: its
   * completion time becomes `now` (PostgreSQL: notified in the same transaction); false for a
   * packet not complete (state.ts restampComplete).
   */
  restampComplete(packet: number, now: string): Promise<boolean>;
  /** A complete packet becomes incomplete again; the mark moves back before it. */
  reopenPacket(packet: number): Promise<void>;
  /** Lowest incomplete packet and highest known packet (null when none): where a pass starts. */
  packetPosition(): Promise<{ firstIncomplete: number | null; highest: number | null }>;
  /** What `replication-info` said and when (`at`: ISO 8601). */
  recordUpstream(latest: number | null, at: string): Promise<void>;
  /** Marks the database as the demo's (the bundled sample feed's data). */
  markDemo(): Promise<void>;
}

/** Kept archives that `--keep-files` no longer covers (sync/retention.ts). */
export interface KeptFiles {
  /**
   * Forgets the expired archives' `stored_path` (database first), then deletes them under `dataDir`.
   * @throws database errors; file removal errors other than a missing file.
   */
  applyRetention(dataDir: string, keep: KeepFiles, now: Date, logger?: Logger): Promise<RetentionResult>;
}

/**
 * Replication packets (sync/replicationStep.ts): their FAILED records and retry times are the
 * {@link FileRecords} of a file key without entity type; the rest is here.
 */
export interface ReplicationRecords {
  /** True when the replication packet of `packet` is stored (SYNCED). */
  replicationStored(packet: number): Promise<boolean>;
  /** Its status (`SYNCED`, `PENDING`, `MISSING`, `FAILED`), undefined when never asked (sync/hourHeld.ts). */
  replicationStatus(packet: number): Promise<string | undefined>;
  /** Stores a verified archive in one transaction (sync/replication.ts storeReplicationPacket). */
  storeReplicationPacket(
    packet: number,
    archivePath: string,
    options: StoreReplicationOptions,
  ): Promise<StoredReplicationPacket>;
  /**
   * A 404: PENDING (a complete packet reopened), or MISSING after an hour with a later packet stored
   * (fileRecords.ts recordNotThere).
   */
  recordNotThere(packet: number, reason: string, now: Date): Promise<'PENDING' | 'MISSING'>;
  /** Replication packets below `below` not stored (MISSING, FAILED, PENDING), ascending (db/replicationQueries.ts). */
  missingReplicationPackets(below: number): Promise<number[]>;
  /** Notes a missing `.asc` of a MISSING packet (signatureMissing.ts recordSignatureFailure). */
  recordSignatureFailure(file: FileKey, error: unknown, now: Date): Promise<string | undefined>;
}

/** `--keep-history` (sync/prune.ts; sync/postgres/prune.ts). */
export interface HistoryPruning {
  /** The first packet `keep` holds history for (packets below it are pruned); undefined for `all` or no packet. */
  cutoff(keep: KeepHistory, now: Date): Promise<number | undefined>;
  /**
   * Prunes the changes and row changes of packets below the window (held back for webhooks not
   * sent yet), never an entity's current version, in small transactions, after recording
   * `history_from`. @throws database errors; what was deleted before stays deleted.
   */
  prune(keep: KeepHistory, now: Date, logger: Logger): Promise<PruneResult>;
}

/** When the pass calls {@link SyncStore.housekeeping}. */
export type HousekeepingMoment = 'passStarted' | 'packetStarted' | 'packetEnded' | 'dumpStored' | 'passEnded';

/** The sync writer's database. `kind` says which. */
export interface SyncStore extends DumpWriter, FileRecords, PacketState, KeptFiles {
  readonly kind: 'sqlite' | 'postgres';
  /** Replication packets. */
  readonly replication: ReplicationRecords;
  /** History pruning. */
  readonly history: HistoryPruning;
  /** The database as messages name it (a path, or a URL without its password). */
  readonly display: string;
  /** The rewrites of the change stream recorded so far (db/feedRewrites.ts), for the pass's warning. */
  feedRewrites(): Promise<readonly FeedRewrite[]>;
  /**
   * Called when a pass starts and ends, when each packet of its range starts and ends (also on an
   * error or abort) and after each stored dump. SQLite stores each packet in
   * one transaction (sync/packetTransaction.ts) and defers its WAL checkpoints to the end of the
   * pass, or checkpoints a WAL grown past its bound; at the pass's end it first merges the search
   * index's segments for a bounded time (db/searchMerge.ts); nothing on PostgreSQL. A failed
   * checkpoint or merge is logged, not thrown.
   * @throws SQLite's error when a packet's transaction cannot begin (busy) or commit.
   */
  housekeeping(moment: HousekeepingMoment, logger: Logger): void;
}

/** The SQLite sync store: the {@link Store} itself with the operations of {@link SyncStore}. */
export interface SqliteSyncStore extends Store, SyncStore {
  readonly kind: 'sqlite';
}

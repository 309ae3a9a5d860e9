import { checkpoint, deferCheckpoints, MAX_DEFERRED_WAL_BYTES, walBytes } from '../db/checkpoint.js';
import type { Store } from '../db/client.js';
import { feedRewrites } from '../db/feedWindow.js';
import {
  missingReplicationPackets,
  replicationPacketRow,
  storedReplicationPacket,
} from '../db/replicationQueries.js';
import { mergeSearchIndex, SEARCH_MERGE_BUDGET_MS } from '../db/searchMerge.js';
import { markDemo, packetPosition, recordUpstream } from '../db/status.js';
import { safeMessage } from '../feed/errors.js';
import type { Logger } from '../logger.js';
import { markPending, recordFailure, recordNotThere, retryDeferred } from './fileRecords.js';
import { ingestSizedDump } from './import.js';
import { type IngestJsonDumpOptions, type IngestResult, ingestJsonDump } from './ingest.js';
import { PacketTransaction } from './packetTransaction.js';
import { historyCutoff, pruneHistory } from './prune.js';
import { storeReplicationPacket } from './replication.js';
import { applyRetention } from './retention.js';
import { recordSignatureFailure } from './signatureMissing.js';
import {
  completePackets,
  dumpStatus,
  explainPending,
  markDumpsSeen,
  markNoChanges,
  pendingDumps,
  reopenPacket,
  restampComplete,
  timeSettledWithEvidence,
} from './state.js';
import type { SqliteSyncStore } from './syncStore.js';

/** Checkpoints the writer's WAL (see deferCheckpoints) and logs it; a failure is logged, not thrown. */
function runCheckpoint(store: Store, logger: Logger): void {
  try {
    const result = checkpoint(store.sqlite);
    if (result.walFrames > 0)
      logger.debug({ event: 'checkpoint', ...result, ms: Math.round(result.ms) }, 'WAL checkpointed');
  } catch (error) {
    logger.warn({ event: 'checkpoint-failed', err: safeMessage(error) }, 'WAL checkpoint failed');
  }
}

/**
 * Merges the search index's segments for at most {@link SEARCH_MERGE_BUDGET_MS} (db/searchMerge.ts),
 * before the pass's checkpoint copies what it wrote; a failure is logged, not thrown: the index's
 * entries are the same merged or not, and the next pass resumes the merge.
 */
function runSearchMerge(store: Store, logger: Logger): void {
  try {
    const result = mergeSearchIndex(store.sqlite, SEARCH_MERGE_BUDGET_MS);
    if (result.steps > 1)
      logger.debug({ event: 'search-merge', ...result, ms: Math.round(result.ms) }, 'search index merged');
  } catch (error) {
    logger.warn({ event: 'search-merge-failed', err: safeMessage(error) }, 'merging the search index failed');
  }
}

/** Checkpoints when the WAL grew past {@link MAX_DEFERRED_WAL_BYTES} before the pass's end. */
function checkpointIfLarge(store: Store, logger: Logger): void {
  if (walBytes(store.path) > MAX_DEFERRED_WAL_BYTES) runCheckpoint(store, logger);
}

/**
 * Smallest archive the sync stores as a bulk load. Each switch of journal mode first copies the
 * pass's WAL so far into the database file, and a small dump's second write is small: a day of 264
 * dumps of 350 KB, the first ones bulk loads into a new database, showed no gain (12.2–12.4 s
 * against 11.4–13.2 s without, bench/RESULTS.md, issue 16), so only large dumps switch.
 */
const MIN_BULK_ARCHIVE_BYTES = 4 << 20;

/**
 * Stores one JSON dump of the feed (sync/ingest.ts). A dump that adds about as much as the
 * database holds (`isBulkLoad`: a large dump synced into a new database, its archive at least
 * {@link MIN_BULK_ARCHIVE_BYTES}) is written once, with a rollback journal and the MBID index built
 * after its lines, as `import` does (import.ts `ingestSizedDump`): in WAL mode its pages would
 * be written twice, to the WAL at COMMIT and to the database file by the checkpoint
 * (bench/RESULTS.md, issue 16). With another connection open (`start` serving, a `serve` process
 * reading) the journal stays WAL and the dump is stored as any other; so is a dump whose size the
 * feed did not say.
 * @throws as ingestJsonDump.
 */
function ingestDump(
  store: Store,
  options: IngestJsonDumpOptions,
  minBulkBytes: number,
  transaction: PacketTransaction,
): Promise<IngestResult> {
  const bytes = options.archiveBytes;
  if (bytes === undefined || bytes === null || bytes < minBulkBytes) return ingestJsonDump(store, options);
  // The packet's archives so far commit first: the journal mode changes only outside a transaction.
  return ingestSizedDump(store, options, bytes, () => transaction.commit());
}

/**
 * The sync's operations on the SQLite `store` (syncStore.ts): today's synchronous functions, each
 * called as it is and its result handed back in a resolved promise, so the ingest's fast path and
 * every statement stay as measured (bench/RESULTS.md). The returned object is `store` too: code
 * not ported yet takes it as a {@link Store}; closing stays with whoever opened `store`.
 * `tuning.minBulkArchiveBytes` replaces {@link MIN_BULK_ARCHIVE_BYTES} (tests, with small archives).
 */
export function sqliteSyncStore(
  store: Store,
  tuning: { minBulkArchiveBytes?: number } = {},
): SqliteSyncStore {
  const minBulkBytes = tuning.minBulkArchiveBytes ?? MIN_BULK_ARCHIVE_BYTES;
  const transaction = new PacketTransaction(store);
  return {
    ...store,
    kind: 'sqlite',
    display: store.path,
    feedRewrites: async () => feedRewrites(store),
    ingestDump: (options) => ingestDump(store, options, minBulkBytes, transaction),
    markPending: async (packet, entity, now) => markPending(store, packet, entity, now),
    recordFailure: async (file, reason, now, error) => recordFailure(store, file, reason, now, error),
    retryDeferred: async (file, now) => retryDeferred(store, file, now),
    dumpStatus: async (packet, entity) => dumpStatus(store, packet, entity),
    pendingDumps: async (from, to) => pendingDumps(store, from, to),
    markNoChanges: async (packet, entity, by, now) => markNoChanges(store, packet, entity, by, now),
    markDumpsSeen: async (packet, at) => markDumpsSeen(store, packet, at),
    explainPending: async (packet, entity, reason, now) => explainPending(store, packet, entity, reason, now),
    timeSettledWithEvidence: async () => timeSettledWithEvidence(store),
    completePackets: async (range, entities, requireReplication, now) =>
      completePackets(store, range, entities, requireReplication, now),
    reopenPacket: async (packet) => reopenPacket(store, packet),
    restampComplete: async (packet, now) => restampComplete(store, packet, now),
    packetPosition: async () => packetPosition(store),
    recordUpstream: async (latest, at) => recordUpstream(store, latest, at),
    markDemo: async () => markDemo(store),
    replication: {
      replicationStored: async (packet) => storedReplicationPacket(store, packet) !== undefined,
      replicationStatus: async (packet) => replicationPacketRow(store, packet)?.status,
      storeReplicationPacket: (packet, archivePath, options) =>
        storeReplicationPacket(store, packet, archivePath, options),
      recordNotThere: async (packet, reason, now) => recordNotThere(store, packet, reason, now),
      missingReplicationPackets: async (below) => missingReplicationPackets(store, below),
      recordSignatureFailure: async (file, error, now) => recordSignatureFailure(store, file, error, now),
    },
    history: {
      cutoff: async (keep, now) => historyCutoff(store, keep, now),
      prune: (keep, now, logger) => pruneHistory(store, keep, now, logger),
    },
    applyRetention: async (dataDir, keep, now, logger) => applyRetention(store, dataDir, keep, now, logger),
    housekeeping(moment, logger) {
      // A packet's COMMIT makes it visible; copying its pages into the database file waits for the
      // pass's end (db/checkpoint.ts), unless the WAL grew past its bound meanwhile.
      if (moment === 'passStarted') deferCheckpoints(store.sqlite);
      else if (moment === 'packetStarted') transaction.begin(logger);
      else if (moment === 'packetEnded') {
        if (transaction.commit()) checkpointIfLarge(store, logger);
      } else if (moment === 'passEnded') {
        runSearchMerge(store, logger);
        runCheckpoint(store, logger);
      } else if (!transaction.open) checkpointIfLarge(store, logger);
    },
  };
}

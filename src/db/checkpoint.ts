import { statSync } from 'node:fs';
import type { Database } from 'better-sqlite3';

/** WAL size from which the sync checkpoints after a commit instead of at the end of its pass. */
export const MAX_DEFERRED_WAL_BYTES = 1 << 30;

/** Outcome of {@link checkpoint}: WAL frames, and how many of them are now in the database file. */
export interface CheckpointResult {
  walFrames: number;
  checkpointedFrames: number;
  /** True when a reader kept part of the WAL from being copied (it is copied next time). */
  busy: boolean;
  ms: number;
}

/**
 * Stops SQLite from checkpointing at COMMIT on this connection (`wal_autocheckpoint = 0`): the
 * writer then calls {@link checkpoint} when it is idle. A dump's COMMIT is when it becomes
 * visible; the copy of its pages from the WAL into the database file (about a fifth of a large
 * dump's ingest, bench/RESULTS.md) is deferred, and pages that several dumps of a pass touch (the
 * MBID index) are copied once.
 */
export function deferCheckpoints(sqlite: Database): void {
  sqlite.pragma('wal_autocheckpoint = 0');
}

/**
 * Copies committed WAL pages into the database file without waiting for readers
 * (`wal_checkpoint(PASSIVE)`); SQLite starts the WAL over once all of it was copied.
 * @throws a SQLite error (e.g. SQLITE_BUSY from another checkpoint).
 */
export function checkpoint(sqlite: Database): CheckpointResult {
  const started = performance.now();
  const [row] = sqlite.pragma('wal_checkpoint(PASSIVE)') as {
    busy: number;
    log: number;
    checkpointed: number;
  }[];
  return {
    walFrames: row?.log ?? 0,
    checkpointedFrames: row?.checkpointed ?? 0,
    busy: row?.busy === 1,
    ms: performance.now() - started,
  };
}

/** Bytes of the WAL file of the database at `path` (0 when there is none). */
export function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

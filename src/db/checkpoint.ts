import { statSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import { withoutBusyWait } from './client.js';

/** WAL size from which the sync checkpoints after a commit instead of at the end of its pass. */
export const MAX_DEFERRED_WAL_BYTES = 1 << 30;

/** Outcome of {@link checkpoint}: WAL frames, and how many of them are now in the database file. */
export interface CheckpointResult {
  walFrames: number;
  checkpointedFrames: number;
  /** True when a reader kept part of the WAL from being copied (it is copied next time). */
  busy: boolean;
  /** True when the WAL file was then truncated to zero bytes. */
  truncated: boolean;
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
 * (`wal_checkpoint(PASSIVE)`); SQLite starts the WAL over once all of it was copied. When all of it
 * was, the WAL file is then truncated to zero bytes (`wal_checkpoint(TRUNCATE)`) so it does not
 * keep a pass's size on disk (a 27.8 MB WAL beside a 0.6 MB demo database); that step does not
 * wait either (busy timeout 0 for it): with a reader still on the WAL it is skipped this time.
 * @throws a SQLite error (e.g. SQLITE_BUSY from another checkpoint).
 */
export function checkpoint(sqlite: Database): CheckpointResult {
  const started = performance.now();
  const [row] = sqlite.pragma('wal_checkpoint(PASSIVE)') as CheckpointRow[];
  const walFrames = row?.log ?? 0;
  const checkpointedFrames = row?.checkpointed ?? 0;
  const busy = row?.busy === 1;
  let truncated = false;
  if (!busy && walFrames > 0 && checkpointedFrames === walFrames) truncated = truncateWal(sqlite);
  return { walFrames, checkpointedFrames, busy, truncated, ms: performance.now() - started };
}

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

function truncateWal(sqlite: Database): boolean {
  return withoutBusyWait(sqlite, () => {
    try {
      const [row] = sqlite.pragma('wal_checkpoint(TRUNCATE)') as CheckpointRow[];
      return row?.busy === 0;
    } catch {
      // SQLITE_BUSY: a reader or another checkpoint; the next pass tries again.
      return false;
    }
  });
}

/** Bytes of the WAL file of the database at `path` (0 when there is none). */
export function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

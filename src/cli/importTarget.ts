import type { FeedRewrite } from '../db/feedRewrites.js';
import type { ImportJsonDumpOptions, ImportResult } from '../sync/import.js';

/** Where `livefeed import` stores: the SQLite store (import.ts), or a PostgreSQL one (importPostgres.ts). */
export interface ImportTarget {
  /** Runs `work` holding the database's writer lock (see session.ts withLock). */
  withLock<T>(stopMessage: string, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  importDump(options: ImportJsonDumpOptions): Promise<ImportResult>;
  /** The rewrites of the change stream recorded so far (db/feedRewrites.ts), for the import's warning. */
  feedRewrites(): Promise<readonly FeedRewrite[]>;
  /**
   * Announces `packet` again when it is complete (its `synced_at` moved to `now`, ISO 8601): after
   * an import stored events behind the stream's readers, a `serve`'s watch wakes its `entityChanged`
   * followers, which then rewind (sync/state.ts restampComplete). False for a packet not complete.
   */
  reannounce(packet: number, now: string): Promise<boolean>;
  close(): void | Promise<void>;
}

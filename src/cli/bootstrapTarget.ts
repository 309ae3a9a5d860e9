import type { BootstrapStore } from '../sync/bootstrapStore.js';

/** Where `livefeed bootstrap` stores: a SQLite file, or a PostgreSQL database (bootstrapPostgres.ts). */
export interface BootstrapTarget {
  store: BootstrapStore;
  /** Runs `work` holding the database's writer lock (see session.ts withLock). */
  withLock<T>(stopMessage: string, work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Marks the database as the demo's (the bundled sample feed's data). */
  markDemo(): Promise<void>;
  close(): void | Promise<void>;
}

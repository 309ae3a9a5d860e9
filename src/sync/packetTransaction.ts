import type { Database } from 'better-sqlite3';
import type { Store } from '../db/client.js';
import { beginHoldingWrites, endHoldingWrites } from '../db/feedServed.js';
import type { Logger } from '../logger.js';

/**
 * One SQLite transaction per packet of a pass, on the writer's connection. Each JSON dump and
 * replication packet in it is its own savepoint (sync/transaction.ts), released only once its
 * signature verified and rolled back otherwise, so the packet's transaction holds verified
 * archives only, each whole; a reader sees a packet's archives appear together.
 *
 * Why not a transaction per archive: in WAL mode each COMMIT writes every page it changed, and
 * each JSON dump of random MBIDs touches most leaf pages of the MBID index. A day of catch-up (24
 * packets of 11 JSON dumps and a replication packet) committed archive by archive wrote 27,884 WAL
 * frames (914 MB) for a 281 MB database and took 11.0–11.6 s as a process; a transaction per packet
 * writes 11,987 frames and takes 9.2–10.4 s (bench/RESULTS.md, "A transaction per packet", issue 16).
 */
export class PacketTransaction {
  #open = false;
  #logger: Logger | undefined;

  private readonly sqlite: Database;

  /** The packet transactions of `store`'s writer connection. */
  constructor(private readonly store: Store) {
    this.sqlite = store.sqlite;
  }

  /** True while a packet's transaction is open on the connection. */
  get open(): boolean {
    return this.#open && this.sqlite.inTransaction;
  }

  /**
   * Begins the packet's transaction (`BEGIN IMMEDIATE`) unless the connection is in one already;
   * `logger` is told if SQLite rolls it back.
   * @throws SQLITE_BUSY past the busy timeout.
   */
  begin(logger: Logger): void {
    this.#logger = logger;
    if (this.sqlite.inTransaction) return;
    this.sqlite.exec('BEGIN IMMEDIATE');
    this.#open = true;
    // Its archives' notes of the served frontier take that of the committed state (db/feedServed.ts).
    beginHoldingWrites(this.store);
  }

  /**
   * Commits the packet's transaction, if one is open. When SQLite rolled the whole transaction back
   * after an error (SQLITE_FULL, an I/O error), its archives are not stored: that is logged, and
   * the next pass fetches them again, as their records say.
   * @returns true when a transaction committed.
   * @throws the COMMIT's SQLite error (the transaction is then rolled back).
   */
  commit(): boolean {
    if (!this.#open) return false;
    this.#open = false;
    endHoldingWrites(this.store);
    if (!this.sqlite.inTransaction) {
      this.#logger?.warn(
        { event: 'packet-rolled-back' },
        "SQLite rolled back the packet's transaction after an error; the next pass fetches its archives again",
      );
      return false;
    }
    try {
      this.sqlite.exec('COMMIT');
    } catch (error) {
      if (this.sqlite.inTransaction) this.sqlite.exec('ROLLBACK');
      throw error;
    }
    return true;
  }
}

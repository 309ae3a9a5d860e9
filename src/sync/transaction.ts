import type { Store } from '../db/client.js';

/**
 * Runs `work` inside `BEGIN IMMEDIATE … COMMIT` on the store's connection, rolling back when it
 * throws or rejects; inside a transaction already open (a packet's, packetTransaction.ts) it runs
 * as a savepoint of it, released or rolled back the same way. Unlike better-sqlite3's
 * `transaction()`, `work` may await (stream reading): the write lock is held throughout, while WAL
 * readers on other connections keep reading the last committed state, so a half-written dump is
 * never visible.
 * @throws whatever `work` throws, after ROLLBACK (or ROLLBACK TO the savepoint).
 */
export async function inTransaction<T>(store: Store, work: () => Promise<T> | T): Promise<T> {
  const nested = store.sqlite.inTransaction;
  store.sqlite.exec(nested ? 'SAVEPOINT livefeed_store' : 'BEGIN IMMEDIATE');
  try {
    const result = await work();
    store.sqlite.exec(nested ? 'RELEASE livefeed_store' : 'COMMIT');
    return result;
  } catch (error) {
    // SQLite may have rolled the whole transaction back itself (SQLITE_FULL, an I/O error).
    if (store.sqlite.inTransaction)
      store.sqlite.exec(nested ? 'ROLLBACK TO livefeed_store; RELEASE livefeed_store' : 'ROLLBACK');
    throw error;
  }
}

import type { Store } from '../db/client.js';

/**
 * Runs `work` inside `BEGIN IMMEDIATE … COMMIT` on the store's connection, rolling back when it
 * throws or rejects. Unlike better-sqlite3's `transaction()`, `work` may await (stream reading):
 * the write lock is held throughout, while WAL readers on other connections keep reading the last
 * committed state, so a half-written dump is never visible.
 * @throws whatever `work` throws, after ROLLBACK.
 */
export async function inTransaction<T>(store: Store, work: () => Promise<T> | T): Promise<T> {
  store.sqlite.exec('BEGIN IMMEDIATE');
  try {
    const result = await work();
    store.sqlite.exec('COMMIT');
    return result;
  } catch (error) {
    if (store.sqlite.inTransaction) store.sqlite.exec('ROLLBACK');
    throw error;
  }
}

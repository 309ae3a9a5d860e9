import type { Store } from './client.js';
import { cachedStatement } from './statements.js';

/**
 * Runs `read` (synchronous reads only) in one read transaction, so that all its statements see one
 * snapshot of the database: without it each statement sees the newest commit of its own moment,
 * and a read made of several statements (the change stream's frontier, its pruning bound, then
 * its changes and removals) could mix two states of a writer that commits in between (a pruning
 * batch, a packet). In WAL mode the snapshot holds no lock that blocks the writer. Inside a
 * transaction already open on the connection, `read` runs in that one.
 * @returns what `read` returns
 * @throws what `read` throws (the transaction is ended either way)
 */
export function readSnapshot<T>(store: Store, read: () => T): T {
  if (store.sqlite.inTransaction) return read();
  cachedStatement(store, 'BEGIN').run();
  try {
    return read();
  } finally {
    cachedStatement(store, 'COMMIT').run();
  }
}

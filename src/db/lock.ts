import { eq } from 'drizzle-orm';
import type { Store } from './client.js';
import { syncLock } from './schema.js';

/** Who holds the writer lock (`sync_lock`, sync/lock.ts takes and releases it). Times are ISO 8601. */
export interface LockHolder {
  pid: number;
  host: string;
  acquiredAt: string;
  heartbeatAt: string;
}

/**
 * The current holder of the writer lock, or undefined when the database is free. Read by the
 * writer inside its `BEGIN IMMEDIATE` and by `livefeed status`; one row, so drizzle's builder.
 */
export function lockHolder(store: Store): LockHolder | undefined {
  const { pid, host, acquiredAt, heartbeatAt } = syncLock;
  return store.db
    .select({ pid, host, acquiredAt, heartbeatAt })
    .from(syncLock)
    .where(eq(syncLock.id, 1))
    .get();
}

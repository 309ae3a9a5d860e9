import type { Store } from './client.js';
import { cachedStatement } from './statements.js';

/**
 * How much history is held (`--keep-history`, issue 14): meta `history_from` is the oldest packet
 * whose changes are still held after pruning; absent when nothing was ever pruned.
 */

/**
 * (packet as text): records that changes before the packet were pruned; never moves back. Written
 * once for SQLite and PostgreSQL (sync/postgres/prune.ts).
 */
export const RECORD_HISTORY_FROM_SQL = `INSERT INTO meta (key, value) VALUES ('history_from', ?)
  ON CONFLICT (key) DO UPDATE SET value = excluded.value
  WHERE CAST(excluded.value AS INTEGER) > CAST(meta.value AS INTEGER)`;

/** Records that changes before `packet` were pruned (never moves back). */
export function recordHistoryFrom(store: Store, packet: number): void {
  store.sqlite.prepare(RECORD_HISTORY_FROM_SQL).run(String(packet));
}

/**
 * The packet before which changes were pruned, or undefined when none ever were. Read on every
 * change stream page, so its statement is prepared once per connection.
 */
export function prunedBefore(store: Store): number | undefined {
  const value = cachedStatement(store, PRUNED_BEFORE_SQL).pluck().get() as string | undefined;
  return value === undefined ? undefined : Number(value);
}

/** () → the pruning cutoff as text, no row when none; written once for SQLite and PostgreSQL. */
export const PRUNED_BEFORE_SQL = "SELECT value FROM meta WHERE key = 'history_from'";

/** () → the oldest packet stored, or null; written once for SQLite and PostgreSQL. */
export const OLDEST_PACKET_SQL = 'SELECT min(number) FROM packets';

/**
 * The oldest packet whose changes are still held: the pruning cutoff, else the oldest stored
 * packet; undefined for an empty database.
 */
export function historyFrom(store: Store): number | undefined {
  const pruned = prunedBefore(store);
  if (pruned !== undefined) return pruned;
  const oldest = cachedStatement(store, OLDEST_PACKET_SQL).pluck().get() as number | null;
  return oldest ?? undefined;
}

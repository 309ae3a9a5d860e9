/**
 * The packets that became complete, in the order they did: what a server announces as
 * `packetSynced` when another process (the sync) completes them. Written once with `?` parameters
 * for both stores: SQLite's watch (ops/events.ts watchCompletedPackets) and PostgreSQL's LISTEN
 * watch (db/postgres/listen.ts watchPostgresPackets), which reads them again after a lost connection.
 */

/** Where a watch stands: the newest complete packet it announced (or found at its start). */
export interface SyncedMark {
  /** `packets.synced_at` (ISO 8601); '' before any packet. */
  syncedAt: string;
  number: number;
}

/** The mark before any packet: every complete packet comes after it. */
export const NO_SYNCED_MARK: SyncedMark = { syncedAt: '', number: 0 };

/**
 * The statements, reading the index `packets_synced_at` (synced_at, number): a row comparison, so
 * that "after the mark" is one index range on both stores.
 */
export const SYNCED_PACKETS_SQL = {
  /** () → the newest complete packet `{ syncedAt, number }`, or none. */
  newest: `SELECT synced_at AS "syncedAt", number FROM packets WHERE synced_at IS NOT NULL
    ORDER BY synced_at DESC, number DESC LIMIT 1`,
  /** (syncedAt, number) → the packets completed after that mark, in completion order. */
  after: `SELECT synced_at AS "syncedAt", number FROM packets
    WHERE synced_at IS NOT NULL AND (synced_at, number) > (?, ?) ORDER BY synced_at, number`,
};

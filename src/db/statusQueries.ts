/**
 * The statements of the status reads (`/ready`, `/freshness`, `/metrics`, `livefeed status`,
 * GraphiQL's example), written once for SQLite and PostgreSQL (`?` parameters, numbered by
 * db/postgres/sql.ts `pgSql`; quoted aliases, a subquery in FROM named). Each reads the sync's
 * ledger (`packets`, `dumps`, `replication_packets`, `meta`); none writes.
 */

/**
 * The files the sync has not finished: JSON dumps and replication packets, one row each; `asked`
 * is 1 once upstream answered 404 for it (not published yet), else 0.
 */
const UNFINISHED = `
    SELECT packet, 'json-dump ' || entity AS file, status, error, attempts,
      CASE WHEN checked_at IS NULL THEN 0 ELSE 1 END AS asked
    FROM dumps WHERE status IN ('PENDING', 'FAILED')
    UNION ALL
    SELECT packet, 'replication packet' AS file, status, error, attempts,
      CASE WHEN missing_since IS NULL THEN 0 ELSE 1 END AS asked
    FROM replication_packets WHERE status IN ('PENDING', 'FAILED', 'MISSING')`;

/** SQL of the status reads, by read. */
export const STATUS_SQL = {
  /** () → one row when at least one packet is complete. */
  anyPacketSynced: 'SELECT 1 AS one FROM packets WHERE synced_at IS NOT NULL LIMIT 1',
  /** (packet) → the nearest packet at or before it with a TIMESTAMP: number, timestamp. */
  packetTime: `SELECT number, timestamp FROM packets WHERE number <= ? AND timestamp IS NOT NULL
    ORDER BY number DESC LIMIT 1`,
  /** () → the `meta` rows of the upstream position a sync recorded: key, value. */
  upstream: "SELECT key, value FROM meta WHERE key IN ('upstream_latest', 'upstream_checked_at')",
  /** () → the `meta` row marking the demo's database (db/status.ts `markDemo`): value. */
  demo: "SELECT value FROM meta WHERE key = 'demo'",
  /** () → pending, failed (MISSING counted as failed). */
  unfinishedCounts: `SELECT count(CASE WHEN status = 'PENDING' THEN 1 END) AS pending,
    count(CASE WHEN status IN ('FAILED', 'MISSING') THEN 1 END) AS failed FROM (${UNFINISHED}) AS unfinished`,
  /** () → the unfinished files, failed first, then by packet and file (add the LIMIT). */
  unfinishedFiles: `SELECT * FROM (${UNFINISHED}) AS unfinished ORDER BY status = 'PENDING', packet, file`,
  /**
   * () → packets, oldest, oldestTimestamp, since, reason of the packets waiting for JSON dumps;
   * reason: the `error` of the oldest PENDING dump that has one (sync/hourHeld.ts).
   */
  waitingForDumps: `SELECT w.packets, w.oldest, p.timestamp AS "oldestTimestamp",
      (SELECT min(e.checked_at) FROM dumps e WHERE e.packet = w.oldest AND e.status = 'PENDING') AS since,
      (SELECT r.error FROM dumps r WHERE r.status = 'PENDING' AND r.error IS NOT NULL
        ORDER BY r.packet, r.entity LIMIT 1) AS reason
    FROM (SELECT count(DISTINCT packet) AS packets, min(packet) AS oldest FROM dumps WHERE status = 'PENDING') w
    LEFT JOIN packets p ON p.number = w.oldest`,
  /**
   * () → packet, entity: the stored JSON dumps with changes of the newest packet that has any. The
   * packets are walked newest first, one primary-key seek into `dumps` each, so the read stops at
   * the newest packet with changes whatever the database's age; `max(packet)` over the SYNCED dumps
   * read every one of them (SQLite took the status index).
   */
  newestDumpsWithChanges: `SELECT packet, entity FROM dumps
    WHERE packet = (SELECT p.number FROM packets p WHERE EXISTS (SELECT 1 FROM dumps d
        WHERE d.packet = p.number AND d.status = 'SYNCED' AND d.change_count > 0)
      ORDER BY p.number DESC LIMIT 1)
      AND status = 'SYNCED' AND change_count > 0`,
  /** () → at: the folder time (ms) of the newest migration applied (SQLite's migration table). */
  lastMigration: 'SELECT max(created_at) AS at FROM __drizzle_migrations',
} as const;

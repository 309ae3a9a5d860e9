import { rmSync } from 'node:fs';
import type { Store } from '../db/client.js';
import { resolveInside } from '../files/local.js';
import type { KeepFiles } from '../files/retentionPolicy.js';
import type { Logger } from '../logger.js';

/** What {@link applyRetention} removed. */
export interface RetentionResult {
  /** Archives deleted. */
  files: number;
  /** Their total size in bytes (as recorded). */
  bytes: number;
}

/** A kept archive: its feed-root-relative name, recorded size in bytes and path under the data folder. */
export interface KeptRow {
  name: string;
  size: number;
  storedPath: string;
}

/** (name): forgets where an archive was kept; written once for SQLite and PostgreSQL. */
export const FORGET_KEPT_SQL = 'UPDATE feed_files SET stored_path = NULL WHERE name = ?';

/**
 * The SELECT of the kept archives `keep` no longer covers at `now` (its one `?` argument given
 * with it), written once for SQLite and PostgreSQL.
 */
export function expiredQuery(
  keep: Exclude<KeepFiles, { kind: 'all' }>,
  now: Date,
): { sql: string; arg: number | string } {
  const columns = 'f.name, f.size, f.stored_path AS "storedPath"';
  if (keep.kind === 'packets') {
    return {
      sql: `SELECT ${columns} FROM feed_files f
         WHERE f.stored_path IS NOT NULL AND f.packet <= (SELECT max(packet) FROM feed_files) - ?`,
      arg: keep.count,
    };
  }
  // Times are ISO 8601 UTC text throughout the schema, so they compare as text.
  return {
    sql: `SELECT ${columns} FROM feed_files f LEFT JOIN packets p ON p.number = f.packet
       WHERE f.stored_path IS NOT NULL AND coalesce(p.timestamp, f.fetched_at) < ?`,
    arg: new Date(now.getTime() - keep.maxAgeMs).toISOString(),
  };
}

/**
 * Deletes the archives of `rows` under `dataDir` (their rows already forgot them) and logs it.
 * @throws file removal errors other than a missing file.
 */
export function removeKept(rows: readonly KeptRow[], dataDir: string, logger?: Logger): RetentionResult {
  for (const row of rows) rmSync(resolveInside(dataDir, row.storedPath), { force: true });
  const result = { files: rows.length, bytes: rows.reduce((sum, row) => sum + row.size, 0) };
  logger?.info(
    { event: 'retention', ...result },
    `retention (--keep-files) removed ${result.files} kept archive(s), ${result.bytes} bytes`,
  );
  return result;
}

/**
 * Deletes the kept archives that `keep` no longer covers and sets their `feed_files.stored_path` to
 * NULL (the row, checksum and signature status stay; the file links then fetch from the feed on
 * demand or answer 410). Detached signatures (`.asc`, a few hundred bytes) stay kept, so the
 * integrity record remains checkable. The database is updated first: a crash in between leaves a
 * stray file, never a row pointing at a deleted one. Run by the sync writer after each pass.
 * @throws SQLite errors; file removal errors other than a missing file.
 */
export function applyRetention(
  store: Store,
  dataDir: string,
  keep: KeepFiles,
  now: Date,
  logger?: Logger,
): RetentionResult {
  if (keep.kind === 'all') return { files: 0, bytes: 0 };
  const { sql, arg } = expiredQuery(keep, now);
  const rows = store.sqlite.prepare(sql).all(arg) as KeptRow[];
  if (rows.length === 0) return { files: 0, bytes: 0 };
  const clear = store.sqlite.prepare(FORGET_KEPT_SQL);
  store.sqlite.transaction(() => {
    for (const row of rows) clear.run(row.name);
  })();
  return removeKept(rows, dataDir, logger);
}

import { rmSync } from 'node:fs';
import type { Store } from '../db/client.js';
import { resolveInside } from '../http/fileBody.js';
import type { Logger } from '../logger.js';

/**
 * Which kept archives stay under `<dataDir>/files` (`--keep-files`, issue 4, Files and links):
 * every one (`all`), those of the newest `count` packets by number (packets are hourly, so `48` is
 * about two days), or those whose packet TIMESTAMP (fetch time when unknown) is at most `maxAgeMs`
 * milliseconds old.
 */
export type KeepFiles =
  | { kind: 'all' }
  | { kind: 'packets'; count: number }
  | { kind: 'age'; maxAgeMs: number };

const AGE_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/**
 * Parses a `--keep-files` value: `all`, a packet count (`48`, `0` keeps none), or an age: a whole
 * number with `m` (minutes), `h`, `d` or `w` (`7d`).
 * @throws Error saying what is accepted.
 */
export function parseKeepFiles(text: string): KeepFiles {
  const value = text.trim().toLowerCase();
  if (value === 'all') return { kind: 'all' };
  if (/^\d+$/.test(value)) return { kind: 'packets', count: Number(value) };
  const age = /^(\d+)([mhdw])$/.exec(value);
  if (age) return { kind: 'age', maxAgeMs: Number(age[1]) * AGE_UNITS[age[2]!]! };
  throw new Error('must be all, a number of packets (48) or an age (36h, 7d, 2w)');
}

/** What {@link applyRetention} removed. */
export interface RetentionResult {
  /** Archives deleted. */
  files: number;
  /** Their total size in bytes (as recorded). */
  bytes: number;
}

interface KeptRow {
  name: string;
  size: number;
  storedPath: string;
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
  const rows = expired(store, keep, now);
  if (rows.length === 0) return { files: 0, bytes: 0 };
  const clear = store.sqlite.prepare('UPDATE feed_files SET stored_path = NULL WHERE name = ?');
  store.sqlite.transaction(() => {
    for (const row of rows) clear.run(row.name);
  })();
  for (const row of rows) rmSync(resolveInside(dataDir, row.storedPath), { force: true });
  const result = { files: rows.length, bytes: rows.reduce((sum, row) => sum + row.size, 0) };
  logger?.info(
    { event: 'retention', ...result },
    `retention (--keep-files) removed ${result.files} kept archive(s), ${result.bytes} bytes`,
  );
  return result;
}

function expired(store: Store, keep: Exclude<KeepFiles, { kind: 'all' }>, now: Date): KeptRow[] {
  const columns = 'f.name, f.size, f.stored_path AS storedPath';
  if (keep.kind === 'packets') {
    return store.sqlite
      .prepare(
        `SELECT ${columns} FROM feed_files f
         WHERE f.stored_path IS NOT NULL AND f.packet <= (SELECT max(packet) FROM feed_files) - ?`,
      )
      .all(keep.count) as KeptRow[];
  }
  // Times are ISO 8601 UTC text throughout the schema, so they compare as text.
  return store.sqlite
    .prepare(
      `SELECT ${columns} FROM feed_files f LEFT JOIN packets p ON p.number = f.packet
       WHERE f.stored_path IS NOT NULL AND coalesce(p.timestamp, f.fetched_at) < ?`,
    )
    .all(new Date(now.getTime() - keep.maxAgeMs).toISOString()) as KeptRow[];
}

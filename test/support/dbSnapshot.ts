import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';

/**
 * The content of a livefeed database without what differs between two equally good runs (times,
 * attempt counters, row ids of log tables), for comparing a disturbed sync with an undisturbed one.
 */

/** Per table, its rows in key order (big tables as a count and digest). */
export type DbSnapshot = Record<string, unknown>;

const TABLES: Record<string, string> = {
  packets:
    'SELECT number, timestamp, schema_sequence, synced_at IS NOT NULL AS complete FROM packets ORDER BY number',
  dumps:
    'SELECT packet, entity, status, change_count, quarantine_count, file_name, error FROM dumps ORDER BY packet, entity',
  quarantine: 'SELECT packet, entity, line, raw, reason FROM quarantine ORDER BY packet, entity, line',
  feed_files:
    'SELECT name, packet, size, sha256, signature, fingerprint, stored_path, signature_stored_path FROM feed_files ORDER BY name',
  replication_packets:
    'SELECT packet, status, format, schema_sequence, timestamp, dbmirror_version, row_count, file_name, error FROM replication_packets ORDER BY packet',
  removals: 'SELECT mbid, entity, packet, kind, merged_into FROM removals ORDER BY packet, mbid, kind',
  events: 'SELECT packet, kind, message FROM events ORDER BY packet, kind, message',
};

// Compared by count and digest: too big to print in a failed assertion.
const DIGESTED: Record<string, string> = {
  changes: 'SELECT id, packet, entity, position, mbid, data FROM changes ORDER BY id',
  row_changes: 'SELECT * FROM row_changes ORDER BY packet, ord',
  // The entities the search index holds (its rowids: their current change ids).
  search_index: 'SELECT rowid FROM search_index ORDER BY rowid',
};

/** Opens `dbPath` read-only and returns its comparable content. */
export function snapshotDb(dbPath: string): DbSnapshot {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const snapshot: DbSnapshot = {};
    const exists = (table: string) =>
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    for (const [table, sql] of Object.entries(TABLES)) {
      if (exists(table)) snapshot[table] = db.prepare(sql).all();
    }
    for (const [table, sql] of Object.entries(DIGESTED)) {
      if (!exists(table)) continue;
      const hash = createHash('sha256');
      let count = 0;
      for (const row of db.prepare(sql).iterate()) {
        hash.update(JSON.stringify(row));
        hash.update('\n');
        count++;
      }
      snapshot[table] = { count, sha256: hash.digest('hex') };
    }
    return snapshot;
  } finally {
    db.close();
  }
}

/** Kept archives under `<dataDir>/files`: relative path → sha256, sorted. */
export function snapshotFiles(dataDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const base = join(dataDir, 'files');
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(base, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(base);
  return out;
}

/** Result of `PRAGMA integrity_check` (`['ok']` when sound). */
export function integrityCheck(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[]).map(
      (r) => r.integrity_check,
    );
  } finally {
    db.close();
  }
}

/** A `dumps` row with the changes and quarantined lines stored for it, as {@link HALF_DUMP_SQL} reads it. */
export interface DumpCounts {
  dump: string;
  status: string;
  expected: number;
  stored: number;
  expectedQ: number;
  storedQ: number;
}

/** Every dump with its counts against the rows stored (SQLite and PostgreSQL alike). */
export const HALF_DUMP_SQL = `SELECT d.packet || '/' || d.entity AS dump, d.status, d.change_count AS expected,
    (SELECT count(*) FROM changes c WHERE c.packet = d.packet AND c.entity = d.entity) AS stored,
    d.quarantine_count AS "expectedQ",
    (SELECT count(*) FROM quarantine q WHERE q.packet = d.packet AND q.entity = d.entity) AS "storedQ"
  FROM dumps d ORDER BY d.packet, d.entity`;

/** Dumps whose changes are stored without a SYNCED `dumps` row (SQLite and PostgreSQL alike). */
export const ORPHAN_DUMP_SQL = `SELECT DISTINCT c.packet || '/' || c.entity AS dump FROM changes c
  WHERE NOT EXISTS (SELECT 1 FROM dumps d WHERE d.packet = c.packet AND d.entity = c.entity AND d.status = 'SYNCED')`;

/**
 * The half states among `rows` ({@link HALF_DUMP_SQL}) and `orphans` ({@link ORPHAN_DUMP_SQL}): a
 * SYNCED dump with a change or quarantine count that differs from the rows stored, a dump not
 * SYNCED yet holding rows, changes without a SYNCED dump. One line each; empty when all are whole.
 */
export function halfDumpLines(rows: DumpCounts[], orphans: { dump: string }[]): string[] {
  return [
    ...rows
      .filter((r) =>
        r.status === 'SYNCED'
          ? r.stored !== r.expected || r.storedQ !== r.expectedQ
          : r.stored > 0 || r.storedQ > 0,
      )
      .map(
        (r) =>
          `${r.dump} ${r.status}: ${r.stored} of ${r.expected} changes, ${r.storedQ} of ${r.expectedQ} quarantined`,
      ),
    ...orphans.map((o) => `${o.dump}: changes without a SYNCED dump`),
  ];
}

/** {@link halfDumpLines} of the SQLite file at `dbPath` (read-only). Empty when every dump is whole or absent. */
export function halfDumps(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare(HALF_DUMP_SQL).all() as DumpCounts[];
    return halfDumpLines(rows, db.prepare(ORPHAN_DUMP_SQL).all() as { dump: string }[]);
  } finally {
    db.close();
  }
}

/**
 * Rows of `changes` in the database FILE alone, read from a copy without its WAL (made in
 * `scratchDir`): the changes a checkpoint has written into the file.
 */
export function changesInFile(dbPath: string, scratchDir: string): number {
  const copy = join(scratchDir, `without-wal-${Math.random().toString(36).slice(2)}.db`);
  copyFileSync(dbPath, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM changes').get() as { n: number }).n;
  } finally {
    db.close();
    rmSync(copy, { force: true });
  }
}

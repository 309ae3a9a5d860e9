import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { REPO_ROOT } from './cli.js';

/**
 * The `when` of the drizzle migration whose tag ends in `_<name>` (drizzle/<dialect>/meta/_journal.json),
 * as recorded in `__drizzle_migrations.created_at`: tests delete the records from there to make a
 * database look as an earlier version left it.
 * @throws Error when no migration has that name.
 */
export function migrationTime(name: string, dialect: 'sqlite' | 'postgres' = 'sqlite'): number {
  const journal = JSON.parse(
    readFileSync(join(REPO_ROOT, 'drizzle', dialect, 'meta', '_journal.json'), 'utf8'),
  ) as {
    entries: { tag: string; when: number }[];
  };
  const entry = journal.entries.find((e) => e.tag.endsWith(`_${name}`));
  if (!entry) throw new Error(`no drizzle migration named ${name}`);
  return entry.when;
}

/**
 * The SQL that undoes each SQLite migration that cannot run twice (it adds a column), by name: a
 * database made to look as an earlier version left it must not hold what a later migration adds,
 * since that migration runs again.
 */
const UNDO: Record<string, string> = {
  change_names: 'ALTER TABLE changes DROP COLUMN name',
  packets_dumps_seen_at: 'ALTER TABLE packets DROP COLUMN dumps_seen_at',
};

/**
 * Makes the SQLite database `sqlite` look as a version before migration `name` left it, as far as
 * the migrations go: forgets the records of `name` and every later migration, and undoes those of
 * them that add columns ({@link UNDO}), so that the next open runs them all again. What `name`
 * itself made (a table, an index) is the test's to take away first.
 */
export function rewindMigrations(sqlite: Database.Database, name: string): void {
  const from = migrationTime(name);
  const journal = JSON.parse(
    readFileSync(join(REPO_ROOT, 'drizzle', 'sqlite', 'meta', '_journal.json'), 'utf8'),
  ) as {
    entries: { tag: string; when: number }[];
  };
  for (const entry of journal.entries) {
    const undo = UNDO[entry.tag.replace(/^\d+_/, '')];
    if (entry.when >= from && undo) sqlite.exec(undo);
  }
  sqlite.prepare('DELETE FROM __drizzle_migrations WHERE created_at >= ?').run(from);
}

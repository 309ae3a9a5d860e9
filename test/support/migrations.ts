import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
 * SQL that takes `changes.name` away (drizzle/sqlite/0011_change_names.sql), for tests that make a
 * SQLite database look as a version before that migration left it: the migration adds the column
 * again when it runs.
 */
export const DROP_CHANGE_NAMES = 'ALTER TABLE changes DROP COLUMN name';

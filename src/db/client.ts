import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema.js';

/** The drizzle database over livefeed's schema. */
export type Db = BetterSQLite3Database<typeof schema>;

/** An open livefeed database: the raw better-sqlite3 handle (hot paths) and drizzle over it. */
export interface Store {
  sqlite: Database.Database;
  db: Db;
  path: string;
  close(): void;
}

/** Folder of the drizzle-kit migrations, beside `src/` and `dist/` alike. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Open without writing: no migrations, `query_only`. Default false. */
  readonly?: boolean;
  /** Milliseconds a statement waits for a lock held by another connection. Default 5000. */
  busyTimeoutMs?: number;
}

/**
 * Opens (creating when needed) the SQLite file at `path` in WAL mode and applies pending
 * migrations from `drizzle/`. The sync writer and GraphQL readers each open their own Store on
 * the same file.
 * @throws Error naming the path when the file cannot be opened or migrated.
 */
export function openStore(path: string, options: OpenStoreOptions = {}): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  let sqlite: Database.Database;
  try {
    sqlite = new Database(path);
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    // 16 KiB pages for new files (a no-op on existing ones): JSON dump lines are kilobytes, and
    // larger pages cut an ingest's page writes and CPU by about a fifth (bench/RESULTS.md). It must
    // come before WAL mode, which fixes the page size.
    if (!options.readonly) sqlite.pragma('page_size = 16384');
    // Likewise only for new files: `--keep-history` gives pruned pages back with incremental vacuum;
    // an existing file is switched by one VACUUM when pruning first runs (sync/prune.ts).
    if (!options.readonly) sqlite.pragma('auto_vacuum = INCREMENTAL');
    sqlite.pragma('journal_mode = WAL');
    // NORMAL is durable across process crashes in WAL mode; only a power loss can drop the last commits.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    throw new Error(`cannot open database ${path}: ${(error as Error).message}`, { cause: error });
  }
  const db = drizzle(sqlite, { schema });
  if (!options.readonly) {
    try {
      migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
    } catch (error) {
      sqlite.close();
      throw new Error(`cannot migrate database ${path}: ${(error as Error).message}`, { cause: error });
    }
  } else {
    sqlite.pragma('query_only = ON');
  }
  return { sqlite, db, path, close: () => sqlite.close() };
}

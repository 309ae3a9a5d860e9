import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { openStore, SERVING_CACHE_BYTES, type Store } from './client.js';
import * as schema from './schema.js';

/** Largest database copied into memory when a read-only mount lacks its `-shm` file (1 GiB). */
const MAX_IN_MEMORY_BYTES = 2 ** 30;

/**
 * Why this process cannot write beside `path` (`read-only file system`, `permission denied`), or
 * null when it can. SQLite in WAL mode writes `-wal` and `-shm` files in the same folder, so the
 * folder counts as much as the file. access(2) answers EROFS even for root.
 */
export function cannotWrite(path: string): string | null {
  for (const target of [dirname(path), path]) {
    if (!existsSync(target)) continue;
    try {
      accessSync(target, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'EROFS'
        ? 'read-only file system'
        : code === 'EACCES'
          ? 'permission denied'
          : String(code);
    }
  }
  return null;
}

/**
 * Opens the database `serve` reads: writable (migrations applied) when it can write, read-only
 * otherwise (no migration, no WAL write; `store.readOnly` says why). On a read-only mount without
 * the `-shm` file SQLite cannot open a WAL database, so a database up to 1 GiB with no pending
 * `-wal` content is read into memory instead (it cannot change under a read-only mount).
 * @throws Error naming the path and saying "read-only file system" when it cannot be read either
 */
export function openForServing(path: string): Store {
  const why = cannotWrite(path);
  // A server's reads keep SQLite's temp cache: only the writer stages archives in TEMP tables.
  if (why === null) return openStore(path, { cacheBytes: SERVING_CACHE_BYTES, tempCacheBytes: null });
  try {
    return {
      ...openStore(path, { readonly: true, cacheBytes: SERVING_CACHE_BYTES, tempCacheBytes: null }),
      readOnly: why,
    };
  } catch (error) {
    const wal = `${path}-wal`;
    const size = statSync(path).size;
    if ((existsSync(wal) && statSync(wal).size > 0) || size > MAX_IN_MEMORY_BYTES) {
      throw new Error(
        `cannot open database ${path} read-only: ${why}, and SQLite needs to write its -shm file beside it ` +
          `(copy it to a writable folder, or mount it with its -wal and -shm files): ${(error as Error).message}`,
        { cause: error },
      );
    }
    return inMemoryCopy(path, why);
  }
}

function inMemoryCopy(path: string, why: string): Store {
  const bytes = readFileSync(path);
  // File format bytes 18 and 19 say WAL (2); an in-memory copy has no WAL: rollback journal (1).
  bytes[18] = 1;
  bytes[19] = 1;
  const sqlite = new Database(bytes);
  sqlite.pragma('query_only = ON');
  sqlite.pragma('foreign_keys = ON');
  return {
    sqlite,
    db: drizzle(sqlite, { schema }),
    path,
    readOnly: `${why} (served from an in-memory copy)`,
    close: () => sqlite.close(),
  };
}

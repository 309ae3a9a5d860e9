import { accessSync, constants, existsSync, mkdirSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { ConfigError } from '../config.js';
import * as schema from './schema.js';
import { registerSearchFold } from './searchFold.js';

/** The drizzle database over livefeed's schema. */
export type Db = BetterSQLite3Database<typeof schema>;

/**
 * An open livefeed database: the raw better-sqlite3 handle and drizzle over it. Cold bookkeeping
 * reads (the lock holder, the packet position, upstream facts, MISSING packets) use drizzle's query
 * builder, typed by the schema. Measured hot paths keep hand-written SQL on `sqlite`: the ingest's
 * batched INSERT (sync/ingest.ts), the changes page read as one BLOB (db/queries.ts), replication
 * staging in TEMP tables (sync/replicationStaging.ts); bench/RESULTS.md has the figures. Statements
 * over a table name filled in at run time (sync/fileRow.ts) stay SQL too.
 */
export interface Store {
  sqlite: Database.Database;
  db: Db;
  path: string;
  /** Set when opened read-only because the file cannot be written: why (`read-only file system`). */
  readOnly?: string;
  close(): void;
}

/** Folder of the drizzle-kit migrations, beside `src/` and `dist/` alike. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle/sqlite', import.meta.url));

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Open without writing: no migrations, `query_only`. Default false. */
  readonly?: boolean;
  /** Milliseconds a statement waits for a lock held by another connection. Default 5000. */
  busyTimeoutMs?: number;
  /** Most bytes of pages this connection keeps cached. Default SQLite's (16 MB in better-sqlite3's build). */
  cacheBytes?: number;
  /**
   * Most bytes of the temp database's pages this connection keeps cached; null: SQLite's default.
   * Default {@link TEMP_CACHE_BYTES}.
   */
  tempCacheBytes?: number | null;
}

/**
 * Temp database cache of a connection. The writer's TEMP tables hold a whole archive's worth of
 * rows (a replication packet's staged rows, a dump's search index stage, the MBID index's sort in a
 * bulk load), and SQLite's default cache kept most of them resident: a replication packet of
 * 100,000 rows (62 MB) peaked at 210 MB of RSS against 137 MB with 2 MB, in the same 2.2 s; a
 * bootstrap of 1M lines at 240 MB against 143 MB, no slower (bench/RESULTS.md). Pages beyond it go
 * to the temp file, which the OS caches anyway.
 */
export const TEMP_CACHE_BYTES = 2 * 1024 * 1024;

/**
 * Page cache of a connection that serves GraphQL: the `changes` MBID index of 1M entities is
 * 44 MB, and with the default 16 MB `resolve` of 100 MBIDs read most of its pages again from the
 * OS on each request: 692 µs for the 100 seeks against 269 µs with 64 MB; and a search that ranks
 * a few hundred entities reads their FTS5 sizes and then its page of lines, which evicted each
 * other (6.3 → 2.9 ms of CPU for a search ranking 993 entities; bench/RESULTS.md). A reader's
 * cache holds only pages it read; the sync's writer keeps the default (its RSS target).
 */
export const SERVING_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Opens (creating when needed) the SQLite file at `path` in WAL mode and applies pending
 * migrations from `drizzle/sqlite/`. The sync writer and GraphQL readers each open their own Store on
 * the same file.
 * @throws Error naming the path when the file cannot be opened or migrated.
 */
export function openStore(path: string, options: OpenStoreOptions = {}): Store {
  if (path !== ':memory:' && !options.readonly) makeFolder(path);
  let sqlite: Database.Database;
  try {
    sqlite = new Database(path, { readonly: !!options.readonly, fileMustExist: !!options.readonly });
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    if (options.cacheBytes !== undefined)
      sqlite.pragma(`cache_size = ${-Math.ceil(options.cacheBytes / 1024)}`);
    // 32 KiB pages for new files (a no-op on existing ones): JSON dump lines are kilobytes. Larger
    // pages than 4 KiB cut an ingest's page writes and CPU by about a fifth, and rows of several KB
    // left 14 % of each 16 KiB page empty (the row after a full page opens the next one) against
    // 5 % of a 32 KiB page: 1.22 × the lines' size for a 1M-line full dump against 1.10 ×
    // (bench/RESULTS.md). It must come before WAL mode, which fixes the page size.
    if (!options.readonly) sqlite.pragma('page_size = 32768');
    // Only for new files: `--keep-history` gives pruned pages back with incremental vacuum; an
    // existing file is switched by one VACUUM when pruning first runs (sync/prune.ts).
    if (!options.readonly) {
      sqlite.pragma('auto_vacuum = INCREMENTAL');
      sqlite.pragma('journal_mode = WAL');
    }
    // NORMAL is durable across process crashes in WAL mode; only a power loss can drop the last commits.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // Before the migrations: drizzle/sqlite/0012_search_fold.sql and the search index's writers call it.
    registerSearchFold(sqlite);
  } catch (error) {
    throw new Error(`cannot open database ${path}: ${explain(path, error)}`, { cause: error });
  }
  const db = drizzle(sqlite, { schema });
  if (!options.readonly) {
    try {
      migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
    } catch (error) {
      sqlite.close();
      throw new Error(`cannot migrate database ${path}: ${explain(path, error)}`, { cause: error });
    }
  } else {
    sqlite.pragma('query_only = ON');
  }
  // After the migrations: set before them, the same packet peaked at 228 MB instead of 170 MB.
  const tempCacheBytes = options.tempCacheBytes === undefined ? TEMP_CACHE_BYTES : options.tempCacheBytes;
  if (tempCacheBytes !== null) sqlite.pragma(`temp.cache_size = ${-Math.ceil(tempCacheBytes / 1024)}`);
  return { sqlite, db, path, close: () => sqlite.close() };
}

/** Creates the database's folder; a read-only mount is named as such, not as ENOENT or EROFS. */
function makeFolder(path: string): void {
  refuseVirtualFileSystem(path);
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw new Error(`cannot create the folder of database ${path}: ${explain(path, error)}`, {
      cause: error,
    });
  }
}

/** The reason of a failure to open or write `path`, naming a read-only file system when it is one. */
function explain(path: string, error: unknown): string {
  const message = (error as Error).message;
  const code = (error as NodeJS.ErrnoException).code;
  let folder = dirname(path);
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  try {
    accessSync(folder, constants.W_OK);
  } catch (probe) {
    if ((probe as NodeJS.ErrnoException).code === 'EROFS')
      // SQLite's and mkdir's own words (unable to open database file, ENOENT) would hide the cause.
      return `read-only file system at ${folder}: livefeed cannot write there (serve opens an existing database read-only)`;
  }
  return code === 'EROFS' ? 'read-only file system' : message;
}

/** statfs types of kernel file systems that hold no files (Node's recursive mkdir never returns in /proc). */
const VIRTUAL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
]);

/**
 * @throws ConfigError when the nearest existing folder of `path` is on a kernel file system
 *   (/proc, /sys): files cannot be created there
 */
function refuseVirtualFileSystem(path: string): void {
  let folder = dirname(resolve(path));
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  const kind = VIRTUAL_FILE_SYSTEMS.get(statfsSync(folder).type);
  if (kind) {
    throw new ConfigError(
      `cannot keep database ${path} under ${folder}: it is on ${kind}, a kernel file system that holds no files; choose another --data-dir or --db`,
    );
  }
}

/**
 * Runs `work` with this connection's busy timeout at 0, then puts it back: for steps that must not
 * wait for other connections (a checkpoint's truncation, a journal mode switch) and are skipped or
 * fall back when they would.
 */
export function withoutBusyWait<T>(sqlite: Database.Database, work: () => T): T {
  const timeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  sqlite.pragma('busy_timeout = 0');
  try {
    return work();
  } finally {
    sqlite.pragma(`busy_timeout = ${timeout}`);
  }
}

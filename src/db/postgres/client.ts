import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { ConfigError } from '../../config.js';
import * as schema from './schema.js';

/** The drizzle database over the PostgreSQL schema. */
export type PostgresDb = NodePgDatabase<typeof schema>;

/** Folder of the PostgreSQL drizzle-kit migrations, beside `src/` and `dist/` alike. */
export const POSTGRES_MIGRATIONS_FOLDER = fileURLToPath(
  new URL('../../../drizzle/postgres', import.meta.url),
);

/**
 * Advisory lock key (`pg_advisory_lock(bigint)`) that serialises migrations of one database: two
 * processes opening a new database at once would otherwise both create the tables.
 */
const MIGRATION_LOCK_KEY = 0x6c69_7665_6d69_67n; // "livemig"

/** How livefeed reaches a PostgreSQL database. */
export interface PostgresConnection {
  /** The URL with the password, for the driver only: never print it. */
  connectionString: string;
  /** The URL as messages show it, its password replaced (config/databaseUrl.ts redactDatabaseUrl). */
  display: string;
}

/**
 * An open PostgreSQL store: a connection pool and drizzle over it. The async twin of the SQLite
 * `Store` (db/client.ts); docs/POSTGRES_PORT.md has the plan that puts both behind one interface.
 */
export interface PostgresStore {
  pool: pg.Pool;
  db: PostgresDb;
  /** The database as messages name it (no password). */
  display: string;
  /** Ends every connection of the pool. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openPostgresStore}. */
export interface OpenPostgresOptions {
  /** Most connections of the pool. Default 4: one writer transaction, its lock, a few reads. */
  maxConnections?: number;
  /** Shown in `pg_stat_activity.application_name`. Default `livefeed`. */
  applicationName?: string;
  /** Called with an error of an idle connection (the server went away); the next query fails too. */
  onIdleError?: (error: Error) => void;
  /** Milliseconds a new connection may take before it fails. Default 30,000. */
  connectTimeoutMs?: number;
  /**
   * Runs on every new connection before its first use (session settings, e.g. writerSession.ts);
   * a rejection ends that connection and fails the query or `connect()` that wanted it.
   */
  onConnect?: (client: pg.ClientBase) => Promise<void>;
  /**
   * Only a database that already holds livefeed's tables: one without them throws
   * {@link NoTablesError} and is left as it was (`status` reads, it never creates). Default false.
   */
  existing?: boolean;
}

/** The database holds none of livefeed's tables: nothing was ever synced or imported into it. */
export class NoTablesError extends Error {
  override name = 'NoTablesError';
}

/**
 * `bigint` (int8) values as JS numbers: every int8 livefeed stores is a safe integer (change ids are
 * at most 53 bits, db/keys.ts), and `count(*)` is int8 too. A value past 2^53 is an error, never a
 * silently rounded number. Set on this pool only, not on the driver's global parsers.
 */
export const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 && format !== 'binary') {
      return (text: string) => {
        const value = Number(text);
        if (!Number.isSafeInteger(value)) throw new RangeError(`bigint ${text} is past 2^53`);
        return value;
      };
    }
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * A pool on `connection` as every livefeed pool is made (int8 as safe numbers, the application
 * name, a 30 s connect timeout, `options.onConnect` on each new connection), connecting on first
 * use; an idle connection's error goes to `options.onIdleError` (an unhandled pool 'error' would
 * end the process).
 */
export function postgresPool(connection: PostgresConnection, options: OpenPostgresOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: connection.connectionString,
    max: options.maxConnections ?? 4,
    application_name: options.applicationName ?? 'livefeed',
    types: PG_TYPES,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 30_000,
    onConnect: options.onConnect,
  });
  pool.on('error', (error) => options.onIdleError?.(error));
  return pool;
}

/**
 * Opens a pool on the database of `connection` and applies the pending migrations of
 * `drizzle/postgres/` (under an advisory lock, so concurrent openers wait for each other). The
 * database must exist; its tables are created on first open.
 * @throws ConfigError naming the database (never its password) when this build has no PostgreSQL
 *   migrations (the single binary), the server refuses the login, the database does not exist,
 *   does not store UTF-8 or lowercases ASCII only; Error naming it when it cannot be reached or a
 *   migration fails. The pool is closed then.
 */
export async function openPostgresStore(
  connection: PostgresConnection,
  options: OpenPostgresOptions = {},
): Promise<PostgresStore> {
  if (!existsSync(join(POSTGRES_MIGRATIONS_FOLDER, 'meta', '_journal.json')))
    throw new ConfigError(
      `cannot use PostgreSQL ${connection.display}: this livefeed has no PostgreSQL migrations (the single binary stores in SQLite only; install livefeed with npm for PostgreSQL, README, PostgreSQL)`,
    );
  const pool = postgresPool(connection, options);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await pool.end();
  };
  try {
    await requireUtf8(pool);
    await requireUnicodeCase(pool);
    if (options.existing && !(await hasTables(pool)))
      throw new NoTablesError(`${connection.display} holds no livefeed tables`);
    if (!(await migrated(pool))) await migrateLocked(pool);
  } catch (error) {
    await close();
    throw error instanceof NoTablesError ? error : openError(connection.display, error);
  }
  return { pool, db: drizzle(pool, { schema }), display: connection.display, close };
}

/**
 * PostgreSQL's SQLSTATEs that say the `--db` value (or its password) is wrong rather than the
 * server: a login refused (28P01, 28000) or a database that does not exist (3D000).
 */
const CONFIGURATION_STATES = new Set(['28P01', '28000', '3D000']);

/**
 * The error of a failed open, naming the database (never its password): a {@link ConfigError}
 * (exit 2) when the user's `--db`, password or database must change, else an Error (exit 4).
 */
function openError(display: string, error: unknown): Error {
  const message = `cannot open database ${display}: ${(error as Error).message}`;
  const code = (error as { code?: unknown }).code;
  if (error instanceof ConfigError) return new ConfigError(message, { cause: error });
  if (typeof code === 'string' && CONFIGURATION_STATES.has(code))
    return new ConfigError(
      `${message} (check --db or LIVEFEED_DB, and LIVEFEED_DB_PASSWORD_FILE; README, PostgreSQL)`,
      { cause: error },
    );
  // The driver's words when the server asks for a password and none was given (SCRAM or MD5).
  if (/password must be a string/.test(message))
    return new ConfigError(
      `cannot open database ${display}: the server asks for a password and none was given: put it in a file ` +
        'named by LIVEFEED_DB_PASSWORD_FILE, or in the URL (README, PostgreSQL)',
      { cause: error },
    );
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code))
    return new Error(`${message} (is PostgreSQL running and reachable there? README, PostgreSQL)`, {
      cause: error,
    });
  return new Error(message, { cause: error });
}

/**
 * @throws ConfigError unless the database stores UTF-8: JSON dump lines are UTF-8 and must come back byte
 *   for byte (a SQL_ASCII or LATIN1 database would store them differently or refuse them).
 */
async function requireUtf8(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ encoding: string }>(
    "SELECT current_setting('server_encoding') AS encoding",
  );
  const encoding = rows[0]?.encoding;
  if (encoding !== 'UTF8')
    throw new ConfigError(
      `the database's encoding is ${encoding}, livefeed needs UTF8 (CREATE DATABASE ... ENCODING 'UTF8')`,
    );
}

/**
 * @throws ConfigError when the database lowercases only ASCII letters: with LC_CTYPE `C` or `POSIX` (and
 *   no ICU locale), `to_tsvector` keeps `КИНО` as written, and search would be case-sensitive
 *   outside the Latin alphabet (README, PostgreSQL). `C.UTF-8` or a language's UTF-8 locale work.
 */
async function requireUnicodeCase(pool: pg.Pool): Promise<void> {
  // datlocprovider exists from PostgreSQL 15 on: read through jsonb, it is null before.
  const { rows } = await pool.query<{ ctype: string; provider: string | null }>(
    `SELECT current_setting('lc_ctype') AS ctype, to_jsonb(d) ->> 'datlocprovider' AS provider
     FROM pg_database d WHERE datname = current_database()`,
  );
  const { ctype, provider } = rows[0] ?? { ctype: '', provider: null };
  if ((ctype === 'C' || ctype === 'POSIX') && provider !== 'i')
    throw new ConfigError(
      `the database's LC_CTYPE is ${ctype}: PostgreSQL then lowercases ASCII letters only, and search would tell ` +
        "КИНО from кино; create the database with a UTF-8 locale (CREATE DATABASE ... LOCALE 'C.UTF-8' " +
        'TEMPLATE template0, or initdb --locale=C.UTF-8); see the README, PostgreSQL',
    );
}

/** `to_regclass` of drizzle's migrations table: false before the first migration. */
export const MIGRATIONS_TABLE_SQL =
  "SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present";
/** When the newest migration applied was made (ms; drizzle's `created_at`); null for none. */
export const LAST_MIGRATION_SQL = 'SELECT max(created_at) AS at FROM drizzle.__drizzle_migrations';

/** True when livefeed's tables were ever created here: drizzle's migrations table exists. */
async function hasTables(pool: pg.Pool): Promise<boolean> {
  return !!(await pool.query<{ present: boolean }>(MIGRATIONS_TABLE_SQL)).rows[0]?.present;
}

/**
 * True when the database has every migration of {@link POSTGRES_MIGRATIONS_FOLDER} (drizzle applies
 * those made after its newest `created_at`). Then nothing is migrated, so a `serve` may connect as
 * a role that can read and not create (drizzle's migrate creates its schema first, which such a
 * role may not). False when the table is missing or cannot be read: the migration says why.
 */
async function migrated(pool: pg.Pool): Promise<boolean> {
  try {
    if (!(await hasTables(pool))) return false;
    const at = (await pool.query<{ at: string | null }>(LAST_MIGRATION_SQL)).rows[0]?.at;
    const files = readMigrationFiles({ migrationsFolder: POSTGRES_MIGRATIONS_FOLDER });
    return at !== null && at !== undefined && files.every((m) => m.folderMillis <= Number(at));
  } catch {
    return false;
  }
}

/** Applies the pending migrations on one connection that holds the migration lock. */
async function migrateLocked(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      await migrate(drizzle(client, { schema }), { migrationsFolder: POSTGRES_MIGRATIONS_FOLDER });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]);
    }
  } finally {
    client.release();
  }
}

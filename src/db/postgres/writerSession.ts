import type pg from 'pg';
import type { Logger } from '../../logger.js';
import { openPostgresStore, type PostgresConnection, type PostgresStore } from './client.js';

/**
 * The session of a PostgreSQL writer's connections (`sync`, `import`, `bootstrap`; issue 17). A
 * writer killed while one of its statements runs leaves that backend running until the statement
 * ends, since PostgreSQL notices a vanished client only when it next reads or writes its socket;
 * its row locks stay until then, and the next writer (which gets the advisory writer lock at once)
 * may wait on them. `client_connection_check_interval` (PostgreSQL 14+) makes the server look for
 * the client every so often while a statement runs and end the statement when it is gone.
 */

/**
 * The advisory lock key of the writer (`pg_try_advisory_lock(bigint)`): "livewrt" in ASCII. The
 * writer takes it (sync/postgres/lock.ts); `livefeed status` looks for it in `pg_locks` (statusReads.ts).
 */
export const WRITER_LOCK_KEY = 0x6c69_7665_7772_74n;

/** {@link WRITER_LOCK_KEY} as `pg_locks` shows a bigint advisory lock: its high and low 32 bits. */
export const WRITER_LOCK_PARTS: readonly [string, string] = [
  (WRITER_LOCK_KEY >> 32n).toString(),
  (WRITER_LOCK_KEY & 0xffff_ffffn).toString(),
];

/**
 * (SQL) The condition that a `pg_locks` row is the granted writer lock of this database
 * (`classid`, `objid`, `objsubid` 1). Its two parameters, numbered from `$first`, are
 * {@link WRITER_LOCK_PARTS}.
 */
export function writerLockHeldSql(first: number): string {
  return `locktype = 'advisory' AND granted
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid::bigint = $${first} AND objid::bigint = $${first + 1} AND objsubid = 1`;
}

/** `client_connection_check_interval` of a writer's connections, in milliseconds. */
export const WRITER_CLIENT_CHECK_MS = 5_000;

// ($1: the interval with its unit) Only on PostgreSQL 14+, which knows the setting (an older server
// refuses the unknown name); not evaluated there, so one statement serves every version.
const CLIENT_CHECK_SQL = `SELECT set_config('client_connection_check_interval', $1, false)
  WHERE CAST(current_setting('server_version_num') AS integer) >= 140000`;

/** SQLSTATE of a value the server refuses: also a server whose operating system cannot check (Linux can). */
const INVALID_PARAMETER_VALUE = '22023';

/**
 * The `onConnect` of a writer's pool (client.ts OpenPostgresOptions): sets
 * `client_connection_check_interval` to `ms` for the session on PostgreSQL 14+; nothing on older
 * servers. A server whose operating system cannot check (it refuses any value but 0; Linux can)
 * keeps its setting and `onRefused` is told (the writer works as before, without the check).
 * @throws the connection's errors (the pool then ends the connection and fails its query).
 */
export function clientCheckOnConnect(
  ms: number,
  onRefused: (error: Error) => void,
): (client: pg.ClientBase) => Promise<void> {
  return async (client) => {
    try {
      await client.query(CLIENT_CHECK_SQL, [`${ms}ms`]);
    } catch (error) {
      if ((error as { code?: string }).code !== INVALID_PARAMETER_VALUE) throw error;
      onRefused(error as Error);
    }
  };
}

/**
 * Opens the database of `connection` (client.ts openPostgresStore: migrated) for the writer command
 * `command`: `application_name` `livefeed <command>`, a warning for a broken idle connection, and
 * every connection with `client_connection_check_interval` {@link WRITER_CLIENT_CHECK_MS} (a
 * warning, once, when the server cannot check its clients).
 * @throws Error naming the database (never its password) when it cannot be opened.
 */
export function openPostgresWriterStore(
  connection: PostgresConnection,
  command: 'sync' | 'import' | 'bootstrap',
  logger: Logger,
): Promise<PostgresStore> {
  let warned = false;
  return openPostgresStore(connection, {
    applicationName: `livefeed ${command}`,
    onIdleError: (error) =>
      logger.warn({ event: 'database-connection-lost', err: error.message }, 'a database connection broke'),
    onConnect: clientCheckOnConnect(WRITER_CLIENT_CHECK_MS, (error) => {
      if (warned) return;
      warned = true;
      logger.warn(
        { event: 'database-client-check-refused', err: error.message },
        'the database server cannot check for vanished clients (client_connection_check_interval): ' +
          "a killed writer's running statement holds its locks until it ends (README, PostgreSQL)",
      );
    }),
  });
}

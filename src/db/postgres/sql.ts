import type pg from 'pg';

/**
 * Running the statements livefeed writes once for both stores (with SQLite's `?` parameters) on
 * PostgreSQL, whose parameters are numbered (`$1`, `$2`, ...).
 */

/**
 * ORDER BY text in code point order, as SQLite's binary collation sorts: a database made with a
 * language's collation (`en_US.UTF-8`, the `postgres` image's default) ignores `_` and `-` at first.
 */
export const CODE_POINT_ORDER = ' COLLATE "C"';

const converted = new Map<string, string>();

/**
 * `sql` with its `?` parameters numbered `$1`, `$2`, ... in order. The shared statements hold no
 * `?` inside a string literal or a jsonb operator, so every `?` is a parameter.
 */
export function pgSql(sql: string): string {
  let text = converted.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    converted.set(sql, text);
  }
  return text;
}

/** Where a statement runs: the pool (a connection of its own, autocommit) or a transaction's client. */
export type PgQueryable = pg.Pool | pg.ClientBase;

/**
 * The rows of the shared statement `sql` (`?` parameters) with `args`.
 * @throws the PostgreSQL error of the statement.
 */
export async function pgRows<T>(on: PgQueryable, sql: string, args: readonly unknown[] = []): Promise<T[]> {
  const result = await on.query(pgSql(sql), args as unknown[]);
  return result.rows as T[];
}

/** The first row of `sql` with `args`, or undefined. */
export async function pgRow<T>(
  on: PgQueryable,
  sql: string,
  args: readonly unknown[] = [],
): Promise<T | undefined> {
  return (await pgRows<T>(on, sql, args))[0];
}

/** The BEGIN of a read that must see one snapshot: every statement sees the same commits. */
export const BEGIN_SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/**
 * Runs `work` in one transaction on a connection of `pool`: COMMIT when it resolves, ROLLBACK when
 * it throws (a connection that cannot roll back is closed, which rolls back too). `begin` starts
 * it (default `BEGIN`; {@link BEGIN_SNAPSHOT} for a consistent read).
 * @throws whatever `work` throws, after ROLLBACK.
 */
export async function inPgTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  begin = 'BEGIN',
): Promise<T> {
  const client = await pool.connect();
  // A connection that breaks between statements emits 'error'; the next statement fails anyway.
  const ignore = () => {};
  client.on('error', ignore);
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    client.removeListener('error', ignore);
    client.release();
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
      client.removeListener('error', ignore);
      client.release();
    } catch (rollbackError) {
      client.release(rollbackError as Error);
    }
    throw error;
  }
}

import type { Statement } from 'better-sqlite3';
import type { Store } from './client.js';

/** Statements kept per connection; beyond this many, the least recently used is dropped. */
const MAX_CACHED = 256;

const caches = new WeakMap<Store['sqlite'], Map<string, Statement>>();

/**
 * `sql` prepared once per connection and reused (API paths run the same statements on every
 * request, the sync the same ones for every dump and packet). At most {@link MAX_CACHED} are kept
 * per connection, so SQL that varies with client input (filters, page sizes) cannot grow the cache
 * without bound. Not for a statement that is iterated: the connection's one copy would be shared.
 */
export function cachedStatement(store: Store, sql: string): Statement {
  return cachedOn(store.sqlite, sql);
}

/** {@link cachedStatement} for code that holds the connection itself. */
export function cachedOn(sqlite: Store['sqlite'], sql: string): Statement {
  let statements = caches.get(sqlite);
  if (!statements) {
    statements = new Map();
    caches.set(sqlite, statements);
  }
  let statement = statements.get(sql);
  if (statement) {
    // Map order is insertion order: re-inserting marks it as the most recently used.
    statements.delete(sql);
  } else {
    statement = sqlite.prepare(sql);
    if (statements.size >= MAX_CACHED) statements.delete(statements.keys().next().value!);
  }
  statements.set(sql, statement);
  return statement;
}

/**
 * `LIMIT n` for a page of `limit` rows, to write into the SQL. Bound as a parameter instead, the
 * limit made SQLite 3.53 prepare the statement again on every run (perf: sqlite3Reprepare under
 * sqlite3_step, 40 % of the changes page's statement under load; bench/RESULTS.md). Page sizes are
 * bounded (MAX_PAGE_SIZE), so this adds at most a few hundred statement texts.
 * @throws RangeError when `limit` is not a non-negative safe integer.
 */
export function limitClause(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`page limit ${limit}`);
  return `LIMIT ${limit}`;
}

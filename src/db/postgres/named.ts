import { createHash } from 'node:crypto';
import { pgSql } from './sql.js';

/** A statement for `pool.query` / `client.query`: its name makes it prepared once per connection. */
export interface NamedStatement {
  name: string;
  text: string;
  rowMode?: 'array';
}

const statements = new Map<string, NamedStatement>();

/**
 * The shared statement `sql` (`?` parameters, db/postgres/sql.ts `pgSql`) as a named statement,
 * prepared once per pooled connection as SQLite's cachedStatement does. Its name is a digest of the
 * text, so a statement built from filters (one text per combination, limits as parameters) gets one
 * name per text; callers build a bounded set of texts. `rowMode: 'array'` gives rows as arrays
 * (column names do not matter, as the shared text's aliases are SQLite's).
 */
export function namedSql(sql: string, rowMode?: 'array'): NamedStatement {
  const key = `${rowMode ?? 'object'}:${sql}`;
  let statement = statements.get(key);
  if (statement === undefined) {
    const text = pgSql(sql);
    const digest = createHash('sha256').update(key).digest('hex').slice(0, 24);
    statement = { name: `livefeed_${digest}`, text, ...(rowMode ? { rowMode } : {}) };
    statements.set(key, statement);
  }
  return statement;
}

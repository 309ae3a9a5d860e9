import type { Statement } from 'better-sqlite3';
import type { Store } from '../../src/db/client.js';

const RUNS = new Set(['all', 'get', 'run', 'iterate']);
const CHAINED = new Set(['pluck', 'raw', 'expand', 'safeIntegers', 'bind']);

/**
 * Records the SQL text of every statement `store` runs from now on (each `all`, `get`, `run` or
 * `iterate` of a statement prepared after this call, cached statements included), for tests that
 * count database reads. Call it before anything prepares statements on the store.
 * @returns the list the SQL texts are appended to, in run order.
 */
export function recordStatements(store: Store): string[] {
  const executed: string[] = [];
  const prepare = store.sqlite.prepare.bind(store.sqlite);
  store.sqlite.prepare = ((sql: string) => {
    const statement = prepare(sql);
    const counted: Statement = new Proxy(statement, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function' || typeof key !== 'string') return value;
        if (RUNS.has(key)) {
          return (...args: unknown[]) => {
            executed.push(sql);
            return value.apply(target, args);
          };
        }
        if (CHAINED.has(key)) {
          return (...args: unknown[]) => {
            value.apply(target, args);
            return counted;
          };
        }
        return value.bind(target);
      },
    });
    return counted;
  }) as typeof store.sqlite.prepare;
  return executed;
}

import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import { cachedStatement, limitClause } from '../../src/db/statements.js';

describe('prepared statements', () => {
  it('prepares a statement once per connection and keeps at most 256, the least recently used going first', () => {
    const store = openStore(':memory:');
    const other = openStore(':memory:');
    try {
      const sql = (n: number) => `SELECT ${n} AS n`;
      const first = cachedStatement(store, sql(0));
      expect(cachedStatement(store, sql(0))).toBe(first);
      expect(cachedStatement(other, sql(0))).not.toBe(first);
      const second = cachedStatement(store, sql(1));
      for (let n = 2; n < 256; n++) cachedStatement(store, sql(n));
      expect(cachedStatement(store, sql(0))).toBe(first); // used again: now the most recent
      cachedStatement(store, sql(256)); // one over: the least recently used (sql(1)) goes
      expect(cachedStatement(store, sql(0))).toBe(first);
      expect(cachedStatement(store, sql(1))).not.toBe(second);
      expect(cachedStatement(store, sql(7)).get()).toEqual({ n: 7 });
    } finally {
      store.close();
      other.close();
    }
  });

  it('writes a page limit into SQL only as a non-negative integer', () => {
    expect(limitClause(0)).toBe('LIMIT 0');
    expect(limitClause(501)).toBe('LIMIT 501');
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60])
      expect(() => limitClause(bad)).toThrow(RangeError);
  });
});

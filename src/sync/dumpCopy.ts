import { createHash } from 'node:crypto';
import type { Store } from '../db/client.js';
import { cachedStatement } from '../db/statements.js';

/**
 * What one JSON dump's stored changes are, to tell whether storing it again changed them (a store
 * behind the change stream that changes nothing records no rewrite, README, Change stream).
 */
export interface StoredCopy {
  /** Changes stored. */
  count: number;
  /** A digest of their ids and lines, in id order. */
  digest: string;
}

/** Whether two copies hold the same changes at the same positions. */
export function sameCopy(a: StoredCopy, b: StoredCopy): boolean {
  return a.count === b.count && a.digest === b.digest;
}

/**
 * The changes stored with ids `first`..`last` (one JSON dump) on SQLite, read once in id order
 * (SHA-256 of each id and line); sync/postgres/record.ts `storedCopyOn` is the PostgreSQL twin.
 * Only asked for a dump stored behind the change stream (an import of an older packet, a
 * backfill), and for the new copy only when its count matches the old one.
 */
export function storedCopy(store: Store, first: number, last: number): StoredCopy {
  const hash = createHash('sha256');
  let count = 0;
  const rows = cachedStatement(store, 'SELECT id, data FROM changes WHERE id BETWEEN ? AND ? ORDER BY id');
  for (const [id, data] of rows.raw().iterate(first, last) as IterableIterator<[number, string | Buffer]>) {
    hash.update(`${id}:`);
    hash.update(data);
    hash.update('\n');
    count++;
  }
  return { count, digest: hash.digest('hex') };
}

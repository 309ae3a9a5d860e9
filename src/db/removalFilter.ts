import { mbidHead32 } from '../feed/mbid.js';
import type { Store } from './client.js';
import { cachedStatement } from './statements.js';

/**
 * Which MBIDs may have a `removals` row, cached per connection, so that a list of MBIDs
 * (`resolve`, `entities`) seeks `removals` only for the few that may: on the 1M-entity bootstrap
 * database the correlated removal seek was 180 of the 430 µs of the current-state statement for 100
 * MBIDs, though almost no MBID ever has a removal (bench/RESULTS.md).
 *
 * The cache is a bit set over each MBID's first 32 bits (MBIDs are random UUIDs), 16 bits per
 * removed MBID (a false positive, about 1 in 16, costs one seek; a false negative never happens).
 * It is valid for the `removals_version` it was built at: SQLite's own triggers change that counter
 * in every transaction that changes `removals` (drizzle/sqlite/0010_removals_version.sql), so a
 * reader that finds the same counter in its snapshot sees the same `removals` rows. A new counter
 * (a packet with deletions or merges was stored, or history pruned) builds the set again from the
 * `removals_mbid` index: about a second per million removed MBIDs, once per change per connection.
 */
export interface RemovalFilter {
  /** False only when `mbid` (lower case) has no `removals` row in the snapshot read. */
  mayHave(mbid: string): boolean;
}

const VERSION = "SELECT value FROM meta WHERE key = 'removals_version'";
const REMOVED_COUNT = 'SELECT count(DISTINCT mbid) FROM removals';
const REMOVED = 'SELECT DISTINCT mbid FROM removals';

// A filter that answers "may have" for every MBID: a database whose migrations predate the
// counter cannot tell when its set would be stale.
const EVERY_MBID: RemovalFilter = { mayHave: () => true };
const MIN_BITS = 1 << 16;
const MAX_BITS = 2 ** 31;

class BitSetFilter implements RemovalFilter {
  readonly #words: Uint32Array;
  readonly #mask: number;

  constructor(
    readonly version: string,
    bits: number,
  ) {
    this.#words = new Uint32Array(bits / 32);
    this.#mask = bits - 1;
  }

  #bit(mbid: string): number {
    // -1 (not an MBID's head) & mask is the last bit: a text that is no MBID cannot have a removal,
    // and costs no more than a seek.
    return mbidHead32(mbid) & this.#mask;
  }

  add(mbid: string): void {
    const bit = this.#bit(mbid);
    this.#words[bit >>> 5]! |= 1 << (bit & 31);
  }

  mayHave(mbid: string): boolean {
    const bit = this.#bit(mbid);
    return (this.#words[bit >>> 5]! & (1 << (bit & 31))) !== 0;
  }
}

const filters = new WeakMap<Store['sqlite'], BitSetFilter>();

function bitsFor(removed: number): number {
  let bits = MIN_BITS;
  while (bits < removed * 16 && bits < MAX_BITS) bits *= 2;
  return bits;
}

/**
 * The removal filter of `store`'s snapshot. Call it inside a read transaction (db/snapshot.ts
 * `readSnapshot`) together with the reads it filters: outside one, `removals` may change between
 * the counter's read and theirs.
 */
export function removalFilter(store: Store): RemovalFilter {
  const version = cachedStatement(store, VERSION).pluck().get() as string | undefined;
  if (version === undefined) return EVERY_MBID;
  const cached = filters.get(store.sqlite);
  if (cached?.version === version) return cached;
  const removed = cachedStatement(store, REMOVED_COUNT).pluck().get() as number;
  const filter = new BitSetFilter(version, bitsFor(removed));
  for (const mbid of cachedStatement(store, REMOVED).pluck().iterate() as IterableIterator<string>) {
    filter.add(mbid);
  }
  filters.set(store.sqlite, filter);
  return filter;
}

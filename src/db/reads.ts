import type { EntityType } from '../feed/entities.js';
import { type Awaitable, thenAwaitable } from './awaitable.js';
import { packetTimestamp, previousChange } from './changeVersionQueries.js';
import type { Store } from './client.js';
import { type CurrentRow, currentOfMbid, currentOfMbids } from './currentQueries.js';
import { type JsonDumpState, jsonDumpState } from './dumpState.js';
import { type FeedReads, sqliteFeedReads } from './feedReads.js';
import { historyFrom, prunedBefore } from './historyQueries.js';
import { type LedgerReads, sqliteLedgerReads } from './ledgerReads.js';
import { type ChangeRow, changeCountOfMbid, changesOfMbidPage, changesPage } from './queries.js';
import {
  type RemovalKey,
  type RemovalRange,
  type RemovalRow,
  removalCount,
  removalOfMbid,
  removalsPage,
} from './replicationQueries.js';
import {
  type SearchFilter,
  type SearchHit,
  type SearchKey,
  type SearchOptions,
  searchCount,
  searchHits,
} from './searchQueries.js';
import { readSnapshot } from './snapshot.js';
import { type StatusReads, sqliteStatusReads } from './statusReads.js';

export { type Awaitable, thenAwaitable };

/**
 * The reads of the current state and of history that the GraphQL layer needs, as one interface
 * with two implementations (docs/POSTGRES_PORT.md, steps 3 and 4): {@link sqliteReads} over the
 * synchronous functions of db/*Queries.ts, which answer at once (a resolver over SQLite stays
 * synchronous: its speed is measured in bench/RESULTS.md), and `postgresReads`
 * (db/postgres/reads.ts, loaded only for a postgres:// database), which answers with promises. Both
 * give the same answers byte for byte: `data` is the stored line's UTF-8 bytes, times the stored
 * ISO 8601 text. MBIDs are lower case, as stored. Every method throws (SQLite) or rejects
 * (PostgreSQL) with the store's error (a closed database, a lost connection): `await` it.
 */
export interface Reads extends LedgerReads, FeedReads, StatusReads {
  /**
   * The current state of `mbid` (db/currentQueries.ts): its newest JSON dump line by change id and
   * its newest removal by packet, then kind; a removal wins over a line of the same or an older
   * packet. Undefined when neither a JSON dump nor a removal holds it.
   */
  currentOfMbid(mbid: string): Awaitable<CurrentRow | undefined>;
  /**
   * The current state of each of `mbids` in the order given (duplicates answer the same row,
   * undefined where not held), in one statement. `data: false` is a hint that the caller mostly
   * needs statuses: SQLite then reads each line when first used; PostgreSQL, which cannot read
   * later without a promise, reads them in the same statement.
   */
  currentOfMbids(
    mbids: readonly string[],
    options?: { data?: boolean },
  ): Awaitable<(CurrentRow | undefined)[]>;
  /**
   * Up to `limit` changes of `mbid` after change id `afterId` (0: from the oldest), oldest first;
   * `lines` as in {@link Reads.changesPage}.
   */
  changesOfMbidPage(mbid: string, afterId: number, limit: number, lines?: boolean): Awaitable<ChangeRow[]>;
  /** Number of changes held for `mbid` (every version). */
  changeCountOfMbid(mbid: string): Awaitable<number>;
  /** The packet before which changes were pruned (--keep-history), or undefined when none ever were. */
  prunedBefore(): Awaitable<number | undefined>;
  /** The oldest packet whose changes are held: the pruning cutoff, else the oldest stored packet. */
  historyFrom(): Awaitable<number | undefined>;
  /**
   * The held version of `change.mbid` just before `change` (the newest change with a smaller id),
   * or undefined when `change` is the oldest held.
   */
  previousChange(change: Pick<ChangeRow, 'id' | 'mbid'>): Awaitable<ChangeRow | undefined>;
  /** The TIMESTAMP of `packet` (ISO 8601 as stored), or null when no archive of it was read. */
  packetTimestamp(packet: number): Awaitable<string | null>;
  /**
   * Up to `limit` changes of the JSON dump (packet, entity) after line `afterPosition`, in file
   * order. `lines` false: the reader shows none of their lines, which SQLite then reads on first
   * use only (db/lazyChange.ts); PostgreSQL reads them with the page either way.
   */
  changesPage(
    packet: number,
    entity: EntityType,
    afterPosition: number,
    limit: number,
    lines?: boolean,
  ): Awaitable<ChangeRow[]>;
  /**
   * Up to `limit` search hits of `filter` (phrases as graphql/searchSyntax.ts writes them, all
   * matching; entity type slots or null) after the hit `after` (undefined: from the best), best
   * first, equal scores newest change first (db/searchQueries.ts). `bm25` is lower-better on both
   * stores: SQLite's bm25, PostgreSQL's negated `ts_rank` (db/postgres/searchReads.ts); compare it
   * within one search and one store only. Rejects with a RangeError for a bad limit.
   */
  search(
    filter: SearchFilter,
    after: SearchKey | undefined,
    limit: number,
    options?: SearchOptions,
  ): Awaitable<SearchHit[]>;
  /** Number of entities `filter` matches. */
  searchCount(filter: SearchFilter): Awaitable<number>;
  /**
   * The newest removal of `mbid` (of a deletion and a merge in one packet, the merge), or
   * undefined when no stored replication packet removed it.
   */
  removalOfMbid(mbid: string): Awaitable<RemovalRow | undefined>;
  /** Up to `limit` removals in `range` after `after` (undefined: from the first), by packet, MBID, kind. */
  removalsPage(range: RemovalRange, after: RemovalKey | undefined, limit: number): Awaitable<RemovalRow[]>;
  /** Number of removals in `range`. */
  removalCount(range: RemovalRange): Awaitable<number>;
  /**
   * Where the JSON dump (packet, entity) stands (db/dumpState.ts), or undefined when this instance
   * has not synced `packet`.
   */
  jsonDumpState(packet: number, entity: EntityType): Awaitable<JsonDumpState | undefined>;
  /**
   * Runs `read` over reads that all see one snapshot of the database, so that a read made of
   * several statements (`resolve`'s list and every merge hop) never mixes two states of a writer
   * that commits in between. SQLite: one read transaction (db/snapshot.ts), `read` must answer at
   * once (its reads do); PostgreSQL: a REPEATABLE READ READ ONLY transaction on one pooled
   * connection. Returns or throws / rejects with what `read` does.
   */
  snapshot<T>(read: (reads: SnapshotReads) => Awaitable<T>): Awaitable<T>;
}

/** The reads {@link Reads.snapshot} offers: those of the current state. */
export type SnapshotReads = Pick<Reads, 'currentOfMbid' | 'currentOfMbids'>;

/**
 * {@link Reads} over a SQLite store: each method calls the synchronous function of the same name
 * (their statements and speed are measured in bench/RESULTS.md) and returns its answer at once; an
 * error is thrown, not returned as a rejected promise.
 */
export function sqliteReads(store: Store): Reads {
  const current: SnapshotReads = {
    currentOfMbid: (mbid) => currentOfMbid(store, mbid),
    currentOfMbids: (mbids, options) => currentOfMbids(store, mbids, options),
  };
  return {
    ...sqliteLedgerReads(store),
    ...sqliteFeedReads(store),
    ...sqliteStatusReads(store),
    ...current,
    changesOfMbidPage: (mbid, afterId, limit, lines) => changesOfMbidPage(store, mbid, afterId, limit, lines),
    changeCountOfMbid: (mbid) => changeCountOfMbid(store, mbid),
    prunedBefore: () => prunedBefore(store),
    historyFrom: () => historyFrom(store),
    previousChange: (change) => previousChange(store, change),
    packetTimestamp: (packet) => packetTimestamp(store, packet),
    changesPage: (packet, entity, afterPosition, limit, lines) =>
      changesPage(store, packet, entity, afterPosition, limit, lines),
    search: (filter, after, limit, options) => searchHits(store, filter, after, limit, options),
    searchCount: (filter) => searchCount(store, filter),
    removalOfMbid: (mbid) => removalOfMbid(store, mbid),
    removalsPage: (range, after, limit) => removalsPage(store, range, after, limit),
    removalCount: (range) => removalCount(store, range),
    jsonDumpState: (packet, entity) => jsonDumpState(store, packet, entity),
    snapshot: (read) => readSnapshot(store, () => synchronously(read(current))),
  };
}

/**
 * `value`, which a SQLite snapshot's read must give at once: a promise would be settled after the
 * snapshot ended.
 * @throws Error when `value` is a promise (a programming error).
 */
function synchronously<T>(value: Awaitable<T>): T {
  if (value instanceof Promise) throw new Error('a SQLite snapshot read answered with a promise');
  return value;
}

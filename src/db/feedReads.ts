import type { Awaitable } from './awaitable.js';
import { countFeedEvents, type FeedPage, type FeedQuery, readFeedEvents } from './changeFeedQueries.js';
import type { Store } from './client.js';
import { type FeedHead, feedFrontier, feedHead } from './feedWindow.js';
import {
  type ReplicationPacketRow,
  type RowChangeFilter,
  type RowChangeRow,
  replicationPacketRow,
  rowChangeCount,
  rowChangesPage,
  type StoredReplicationPacketRow,
  storedReplicationPacket,
  type TableChangesRow,
  tableChangesOf,
} from './replicationQueries.js';
import { readSnapshot } from './snapshot.js';

/**
 * The reads of stored replication packets and of the change stream that the GraphQL layer needs
 * (graphql/types/{replication,rowChange,changeFeed}.ts; docs/POSTGRES_PORT.md, step 4), part of
 * `Reads` (db/reads.ts). {@link sqliteFeedReads} answers at once with the synchronous functions of
 * db/replicationQueries.ts and db/changeFeedQueries.ts (the change stream's page is one BLOB read,
 * measured in bench/RESULTS.md); `postgresFeedReads` (db/postgres/feedReads.ts) answers with
 * promises. Both give the same answers over the same rows: times as stored text, row images as
 * JSON text of the same value (PostgreSQL's jsonb gives its keys in its own order and spacing),
 * change lines as the stored bytes.
 */
export interface FeedReads {
  /** The `replication_packets` row of `packet` (any status), or undefined when never tried. */
  replicationPacketRow(packet: number): Awaitable<ReplicationPacketRow | undefined>;
  /** The replication packet of `packet` when it is stored (SYNCED), else undefined. */
  storedReplicationPacket(packet: number): Awaitable<StoredReplicationPacketRow | undefined>;
  /** Inserts, updates and deletes per table of `packet`'s replication packet, sorted by table name. */
  tableChangesOf(packet: number): Awaitable<TableChangesRow[]>;
  /**
   * Up to `limit` row changes of `packet` after apply position `afterOrd` (-1: from the first), in
   * apply order, optionally of one table and operation. Throws (SQLite) or rejects (PostgreSQL)
   * with a RangeError for a bad limit.
   */
  rowChangesPage(
    packet: number,
    filter: RowChangeFilter,
    afterOrd: number,
    limit: number,
  ): Awaitable<RowChangeRow[]>;
  /** Number of row changes of `packet` matching `filter`. */
  rowChangeCount(packet: number, filter: RowChangeFilter): Awaitable<number>;
  /**
   * Up to `query.first` events of the change stream after `query.after` within its filters and the
   * frontier, read in one snapshot (db/changeFeedQueries.ts readFeedEvents).
   * Throws or rejects with HistoryPrunedError (db/feedWindow.ts) when `after` (or, without it,
   * `since`) lies before pruned history, a RangeError for a bad `first`.
   */
  readFeedEvents(query: FeedQuery): Awaitable<FeedPage>;
  /**
   * Number of events {@link readFeedEvents} would return from `query.after` on with no page limit,
   * in one snapshot. Throws or rejects with HistoryPrunedError as readFeedEvents.
   */
  countFeedEvents(query: Omit<FeedQuery, 'first'>): Awaitable<number>;
  /**
   * The newest packet the change stream serves (every event up to its end can be read and no
   * later sync inserts one before it), or undefined when none is. db/feedWindow.ts feedFrontier.
   */
  feedFrontier(): Awaitable<number | undefined>;
  /**
   * The head of the stream, in one snapshot (db/feedWindow.ts FeedHead): the newest packet the
   * change stream serves (every event up to its end can be read and no later sync inserts one
   * before it; db/feedWindow.ts feedFrontier), or undefined when none is; the current epoch and the
   * packet of the newest rewrite (db/feedRewrites.ts). Where a live follow starts
   * (ops/changeStream.ts); what `livefeed status` and /metrics show of the stream.
   */
  feedHead(): Awaitable<FeedHead>;
}

/**
 * {@link FeedReads} over a SQLite store: the synchronous functions of the same names, answering
 * at once; an error is thrown, not returned as a rejected promise.
 */
export function sqliteFeedReads(store: Store): FeedReads {
  return {
    replicationPacketRow: (packet) => replicationPacketRow(store, packet),
    storedReplicationPacket: (packet) => storedReplicationPacket(store, packet),
    tableChangesOf: (packet) => tableChangesOf(store, packet),
    rowChangesPage: (packet, filter, afterOrd, limit) =>
      rowChangesPage(store, packet, filter, afterOrd, limit),
    rowChangeCount: (packet, filter) => rowChangeCount(store, packet, filter),
    readFeedEvents: (query) => readFeedEvents(store, query),
    countFeedEvents: (query) => countFeedEvents(store, query),
    feedFrontier: () => feedFrontier(store),
    feedHead: () => readSnapshot(store, () => feedHead(store)),
  };
}

import type { EntityType } from '../feed/entities.js';
import { packetTimestamp } from './changeVersionQueries.js';
import type { Store } from './client.js';
import {
  changeIdAtOrBefore,
  changeIdBeforePacket,
  compareFeedPositions,
  type FeedPosition,
  nextPacketOf,
  type RemovalKind,
} from './feedPosition.js';
import type { FeedRewrite } from './feedRewrites.js';
import { type FeedBounds, type FeedWindow, feedRewrites, feedWindow } from './feedWindow.js';
import { type ChangeRow, pageOfChanges } from './queries.js';
import type { RemovalRow } from './replicationQueries.js';
import { readSnapshot } from './snapshot.js';
import { cachedStatement, limitClause } from './statements.js';

/**
 * The change stream (issue 15): JSON dump changes and removals of every packet held, in the order
 * of db/feedPosition.ts, read by `changeFeed`, the `entityChanged` subscription and webhooks.
 *
 * What "new" means: the stream serves only packets up to its **frontier**, the newest packet that
 * is complete with every packet before it (`latestPacket`) and before the first packet whose
 * content may still change: a JSON dump settled by `--settle-after` alone (asked again once a later
 * packet's dump is seen; it may exist after all) or a replication packet still MISSING (asked
 * again on every poll). Nothing can be stored before a position already handed out, so a position
 * stays valid across syncs: the next read starts exactly after it. (Only an operator's explicit
 * `livefeed import`, sync `--from` or `bootstrap` into an old packet rewrites history behind the
 * frontier: db/feedRewrites.ts records it, and a position made before it is refused.)
 */

/** A JSON dump change in the stream, with its packet's TIMESTAMP (ISO 8601, null when unknown). */
export interface FeedChange extends ChangeRow {
  timestamp: string | null;
}

/** One event of the stream: a JSON dump change, or a removal (deletion or merge). */
export type FeedEvent = FeedChange | RemovalRow;

/** True when `event` is a removal (a RemovalRow has `kind`, a change has `data`). */
export function isRemovalEvent(event: FeedEvent): event is RemovalRow {
  return 'kind' in event;
}

/** The position just after `event`. */
export function positionOfEvent(event: FeedEvent): FeedPosition {
  return isRemovalEvent(event)
    ? { at: 'removal', packet: event.packet, mbid: event.mbid, kind: event.kind }
    : { at: 'change', id: event.id };
}

/** What {@link readFeedEvents} reads. Filters combine with AND; empty lists are no filter. */
export interface FeedQuery extends FeedBounds {
  /** Most events returned (a non-negative integer; the API caps it at 500). */
  first: number;
  entities?: readonly EntityType[];
  /** Lower-case MBIDs. */
  mbids?: readonly string[];
  /**
   * False when the reader shows none of the changes' lines: each change's `data` is then read on
   * first use (db/lazyChange.ts), and a page costs a third less. Default true. SQLite only: the
   * PostgreSQL reads take the lines with the page either way.
   */
  lines?: boolean;
}

/** One read of the stream. */
export interface FeedPage {
  events: FeedEvent[];
  /**
   * Where the next read starts: after the last event when more follow (with `first` 0, where this
   * read started), else after the newest packet read (so that an empty or filtered page still moves
   * on); `after` when nothing could be read.
   * Undefined only when `after` was and the stream served nothing.
   */
  next: FeedPosition | undefined;
  /** True when more events follow now (`first` were returned and one more exists). */
  hasMore: boolean;
  /**
   * The rewrites recorded when the page was read (db/feedRewrites.ts), oldest first: positions
   * taken from the page carry their current epoch.
   */
  rewrites: readonly FeedRewrite[];
}

/**
 * Up to `first` events after `query.after`, in stream order, within the filters and the frontier,
 * read in one snapshot (db/snapshot.ts): a pruning or a packet committed meanwhile is either wholly
 * seen or not at all. Without `after` the stream starts at the oldest packet held (`historyFrom`).
 * @throws HistoryPrunedError when `after` (or, without it, `since`) lies before pruned history
 * @throws HistoryRewrittenError when `after` (made in epoch `query.epoch`) lies at or after a
 *   packet rewritten since (db/feedRewrites.ts)
 * @throws RangeError when `first` is not a non-negative safe integer
 */
export function readFeedEvents(store: Store, query: FeedQuery): FeedPage {
  return readSnapshot(store, () => readFeedEventsIn(store, query));
}

function readFeedEventsIn(store: Store, query: FeedQuery): FeedPage {
  const rewrites = feedRewrites(store);
  const window = feedWindow(store, query, rewrites);
  if (window === undefined) return emptyPage(query, rewrites);
  const limit = query.first + 1;
  return feedPageOf(
    query,
    { ...window, rewrites },
    readChanges(store, window, query, limit),
    readRemovals(store, window, query, limit),
  );
}

/** The page of a read that serves nothing, read with `rewrites` recorded: it stays where it was. */
export function emptyPage(query: FeedQuery, rewrites: readonly FeedRewrite[]): FeedPage {
  return { events: [], next: query.after, hasMore: false, rewrites };
}

/**
 * The page of `query` from up to `first + 1` changes and removals of `window`, each in stream
 * order (the rule of both stores).
 */
export function feedPageOf(
  query: FeedQuery,
  window: FeedWindow & { rewrites: readonly FeedRewrite[] },
  changes: FeedChange[],
  removals: RemovalRow[],
): FeedPage {
  const merged = mergeEvents(changes, removals, query.first + 1);
  const hasMore = merged.length > query.first;
  const events = hasMore ? merged.slice(0, query.first) : merged;
  // `first: 0` with events waiting stays where the read started: the next read gets them all.
  const last = events.at(-1);
  const reached: FeedPosition = hasMore
    ? last
      ? positionOfEvent(last)
      : window.lower
    : { at: 'packetEnd', packet: window.bound };
  const next = query.after && compareFeedPositions(query.after, reached) > 0 ? query.after : reached;
  return { events, next, hasMore, rewrites: window.rewrites };
}

/**
 * Number of events {@link readFeedEvents} would return from `query.after` on with no page limit
 * (what is waiting now). Two counts over the same ranges as the read, in one snapshot.
 * @throws HistoryPrunedError as {@link readFeedEvents}
 */
export function countFeedEvents(store: Store, query: Omit<FeedQuery, 'first'>): number {
  return readSnapshot(store, () => countFeedEventsIn(store, query));
}

function countFeedEventsIn(store: Store, query: Omit<FeedQuery, 'first'>): number {
  const window = feedWindow(store, query);
  if (window === undefined) return 0;
  const count = ({ sql, params }: FeedWhere) =>
    cachedStatement(store, sql)
      .pluck()
      .get(...params) as number;
  const counts = feedCountSql(window, query, jsonEachList);
  return count(counts.changes) + count(counts.removals);
}

/** A statement (`?` parameters) and its parameters. */
export interface FeedWhere {
  sql: string;
  params: unknown[];
}

/**
 * A dialect's filter "`column` is one of `values`": SQLite reads a JSON list with `json_each` (one
 * statement text whatever the list's length), PostgreSQL an array parameter (`= ANY`).
 */
export type ListFilter = (column: string, values: readonly string[]) => FeedWhere;

/** SQLite's {@link ListFilter}. */
const jsonEachList: ListFilter = (column, values) => ({
  sql: ` AND ${column} IN (SELECT value FROM json_each(?))`,
  params: [JSON.stringify(values)],
});

// Filters as lists (one statement text per combination, prepared once).
function filterSql(query: Omit<FeedQuery, 'first'>, params: unknown[], list: ListFilter): string {
  let sql = '';
  for (const [column, values] of [
    ['entity', query.entities],
    ['mbid', query.mbids],
  ] as const) {
    if (!values || values.length === 0) continue;
    const filter = list(column, values);
    sql += filter.sql;
    params.push(...filter.params);
  }
  return sql;
}

/** WHERE terms and parameters of the changes in `window` that pass the filters. */
export function changesWhere(
  window: FeedWindow,
  query: Omit<FeedQuery, 'first'>,
  list: ListFilter,
): FeedWhere {
  const { lower, bound } = window;
  const params: unknown[] = [changeIdAtOrBefore(lower), changeIdBeforePacket(bound + 1)];
  return { sql: `id > ? AND id <= ?${filterSql(query, params, list)}`, params };
}

/** WHERE terms and parameters of the removals in `window` that pass the filters. */
export function removalsWhere(
  window: FeedWindow,
  query: Omit<FeedQuery, 'first'>,
  list: ListFilter,
): FeedWhere {
  const { lower, bound } = window;
  // (packet, mbid, kind) after the lower position: '' sorts before every MBID.
  const key: [number, string, RemovalKind | ''] =
    lower.at === 'removal' ? [lower.packet, lower.mbid, lower.kind] : [nextPacketOf(lower), '', ''];
  const params: unknown[] = [...key, bound];
  return {
    sql: `(packet, mbid, kind) > (?, ?, ?) AND packet <= ?${filterSql(query, params, list)}`,
    params,
  };
}

/** The two counts of {@link countFeedEvents}, written once for both stores. */
export function feedCountSql(
  window: FeedWindow,
  query: Omit<FeedQuery, 'first'>,
  list: ListFilter,
): { changes: FeedWhere; removals: FeedWhere } {
  const changes = changesWhere(window, query, list);
  const removals = removalsWhere(window, query, list);
  return {
    changes: { sql: `SELECT count(*) FROM changes WHERE ${changes.sql}`, params: changes.params },
    removals: { sql: `SELECT count(*) FROM removals WHERE ${removals.sql}`, params: removals.params },
  };
}

/**
 * The removals of a page (`where` from {@link removalsWhere}, `limit` a LIMIT clause), written once
 * for both stores; columns in the order of {@link RemovalRow}.
 */
export function removalPageSql(where: string, limit: string): string {
  return `SELECT mbid, entity, packet, kind, merged_into AS mergedInto,
       (SELECT r.timestamp FROM replication_packets r WHERE r.packet = removals.packet) AS timestamp
     FROM removals WHERE ${where} ORDER BY packet, mbid, kind ${limit}`;
}

function readChanges(store: Store, window: FeedWindow, query: FeedQuery, limit: number): FeedChange[] {
  const { sql, params } = changesWhere(window, query, jsonEachList);
  const rows = pageOfChanges(
    store,
    `WHERE ${sql} ORDER BY id ${limitClause(limit)}`,
    query.lines !== false,
    ...params,
  );
  const byPacket = new Map<number, string | null>();
  return rows.map((row) => {
    let at = byPacket.get(row.packet);
    if (at === undefined) {
      at = packetTimestamp(store, row.packet);
      byPacket.set(row.packet, at);
    }
    return Object.assign(row, { timestamp: at });
  });
}

function readRemovals(store: Store, window: FeedWindow, query: FeedQuery, limit: number): RemovalRow[] {
  const { sql, params } = removalsWhere(window, query, jsonEachList);
  return cachedStatement(store, removalPageSql(sql, limitClause(limit))).all(...params) as RemovalRow[];
}

/** The first `limit` events of two lists each in stream order, merged in stream order. */
function mergeEvents(changes: FeedChange[], removals: RemovalRow[], limit: number): FeedEvent[] {
  const events: FeedEvent[] = [];
  let c = 0;
  let r = 0;
  while (events.length < limit && (c < changes.length || r < removals.length)) {
    // Within a packet every change comes before every removal.
    const takeChange =
      r >= removals.length || (c < changes.length && changes[c]!.packet <= removals[r]!.packet);
    events.push(takeChange ? changes[c++]! : removals[r++]!);
  }
  return events;
}

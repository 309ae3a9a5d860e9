// Where a read of the change stream starts and ends: its frontier (the newest packet that can no
// longer change), the pruned history below it, and the packets of `since` and `until`.
import type { Store } from './client.js';
import { type FeedPosition, nextPacketOf } from './feedPosition.js';
import { historyFrom, prunedBefore } from './historyQueries.js';
import { latestPacket } from './latestPacket.js';
import { cachedStatement } from './statements.js';

/** What bounds a read of the change stream. */
export interface FeedBounds {
  /** Read after this position; from the start of the history held when undefined. */
  after?: FeedPosition;
  /** Only packets whose TIMESTAMP is at or after this instant (ISO 8601). */
  since?: string;
  /** Only packets whose TIMESTAMP is at or before this instant (ISO 8601). */
  until?: string;
}

/** Thrown when a position or `since` lies before the history held: events after it were pruned. */
export class HistoryPrunedError extends Error {
  /** @param historyFrom the oldest packet whose changes are still held */
  constructor(readonly historyFrom: number) {
    super(
      `the change stream's history before packet ${historyFrom} was pruned (--keep-history): ` +
        'events after this position are gone; start again without a cursor (from packet ' +
        `${historyFrom}) and reload the entities you follow (entity, entities)`,
    );
    this.name = 'HistoryPrunedError';
  }
}

const frontiers = new WeakMap<Store['sqlite'], { version: string; frontier: number | undefined }>();

/**
 * The newest packet the stream serves (see the module comment), or undefined when none is.
 * Cached per connection until a commit (this connection's or another's) changes the database.
 */
export function feedFrontier(store: Store): number | undefined {
  const version = `${cachedStatement(store, 'PRAGMA data_version').pluck().get()}:${cachedStatement(
    store,
    'SELECT total_changes()',
  )
    .pluck()
    .get()}`;
  const cached = frontiers.get(store.sqlite);
  if (cached?.version === version) return cached.frontier;
  const latest = latestPacket(store)?.number;
  const blocker = cachedStatement(
    store,
    `SELECT min(packet) FROM (
       SELECT packet FROM dumps WHERE status = 'NO_CHANGES' AND settled_by = 'TIME'
       UNION ALL SELECT packet FROM replication_packets WHERE status = 'MISSING')`,
  )
    .pluck()
    .get() as number | null;
  const frontier = latest === undefined || blocker === null ? latest : Math.min(latest, blocker - 1);
  const value = frontier !== undefined && frontier > 0 ? frontier : undefined;
  frontiers.set(store.sqlite, { version, frontier: value });
  return value;
}

/** The part of the stream a query reads: after `lower`, up to the end of packet `bound`. */
export interface FeedWindow {
  lower: FeedPosition;
  bound: number;
}

/**
 * The window of `query`, or undefined when the stream serves nothing for it yet.
 * @throws HistoryPrunedError when `after` (or, without it, `since`) lies before pruned history
 */
export function feedWindow(store: Store, query: FeedBounds): FeedWindow | undefined {
  const pruned = prunedBefore(store);
  const firstWanted = query.after ? nextPacketOf(query.after) : undefined;
  if (pruned !== undefined && firstWanted !== undefined && firstWanted < pruned) {
    throw new HistoryPrunedError(pruned);
  }
  const sincePacket = query.since === undefined ? undefined : firstPacketSince(store, query.since);
  if (pruned !== undefined && !query.after && sincePacket !== undefined && sincePacket < pruned) {
    throw new HistoryPrunedError(pruned);
  }
  const startPacket = Math.max(firstWanted ?? historyFrom(store) ?? 1, sincePacket ?? 1);
  const frontier = feedFrontier(store);
  const until = query.until === undefined ? frontier : lastPacketUntil(store, query.until);
  if (frontier === undefined || until === undefined) return undefined;
  const lower: FeedPosition =
    query.after && firstWanted === startPacket ? query.after : { at: 'packetEnd', packet: startPacket - 1 };
  return { lower, bound: Math.min(frontier, until) };
}

/** The first packet whose TIMESTAMP is at or after `since`; one past the newest when none is. */
function firstPacketSince(store: Store, since: string): number {
  const row = cachedStatement(
    store,
    `SELECT (SELECT min(number) FROM packets WHERE julianday(timestamp) >= julianday(?)) AS first,
       (SELECT max(number) FROM packets) AS newest`,
  ).get(since) as { first: number | null; newest: number | null };
  return row.first ?? (row.newest ?? 0) + 1;
}

/** The newest packet whose TIMESTAMP is at or before `until`; undefined when none is. */
function lastPacketUntil(store: Store, until: string): number | undefined {
  const value = cachedStatement(
    store,
    'SELECT max(number) FROM packets WHERE julianday(timestamp) <= julianday(?)',
  )
    .pluck()
    .get(until) as number | null;
  return value ?? undefined;
}

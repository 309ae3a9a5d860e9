// Where a read of the change stream starts and ends: its frontier (the newest packet that can no
// longer change), the pruned history below it, and the packets of `since` and `until`.
import type { Store } from './client.js';
import { type FeedPosition, nextPacketOf } from './feedPosition.js';
import {
  currentEpoch,
  type FeedRewrite,
  HistoryRewrittenError,
  parseRewrites,
  REWRITES_KEY,
  rewrittenBefore,
} from './feedRewrites.js';
import { historyFrom, prunedBefore } from './historyQueries.js';
import { LATEST_PACKET_SQL, latestPacket } from './latestPacket.js';
import { cachedStatement } from './statements.js';

/** What bounds a read of the change stream. */
export interface FeedBounds {
  /** Read after this position; from the start of the history held when undefined. */
  after?: FeedPosition;
  /** The epoch `after` was made in (its cursor's, db/feedRewrites.ts); 0 when absent. */
  epoch?: number;
  /** Only packets whose TIMESTAMP is at or after this instant (ISO 8601). */
  since?: string;
  /** Only packets whose TIMESTAMP is at or before this instant (ISO 8601). */
  until?: string;
}

/** Thrown when a position or `since` lies before the history held: events after it were pruned. */
export class HistoryPrunedError extends Error {
  /**
   * @param historyFrom the oldest packet whose changes are still held
   * @param by what lies before it: the cursor (`after`), or, without one, `since` or `until`
   */
  constructor(
    readonly historyFrom: number,
    by: 'cursor' | 'since' | 'until' = 'cursor',
  ) {
    const pruned = `the change stream's history before packet ${historyFrom} was pruned (--keep-history): `;
    super(
      by === 'cursor'
        ? `${pruned}events after this position are gone; start again without a cursor (from packet ` +
            `${historyFrom}) and reload the entities you follow (entity, entities)`
        : `${pruned}"${by}" asks for events before it, which are gone; ask with a later "${by}" ` +
            `(service { historyFrom }) or without it (from packet ${historyFrom})`,
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
  const blocker = cachedStatement(store, FEED_SQL.blocker).pluck().get() as number | null;
  const value = frontierOf(latest, blocker);
  frontiers.set(store.sqlite, { version, frontier: value });
  return value;
}

/**
 * The frontier given the newest complete packet and the first packet that may still change (see
 * the module comment of db/changeFeedQueries.ts); undefined when no packet is served.
 */
export function frontierOf(
  latest: number | undefined,
  blocker: number | null | undefined,
): number | undefined {
  const frontier = latest === undefined || blocker == null ? latest : Math.min(latest, blocker - 1);
  return frontier !== undefined && frontier > 0 ? frontier : undefined;
}

/** The part of the stream a query reads: after `lower`, up to the end of packet `bound`. */
export interface FeedWindow {
  lower: FeedPosition;
  bound: number;
}

/**
 * What the window of a query depends on, read in one snapshot: the pruning cutoff, the oldest
 * packet held (only read without `after`), the packets of `since` and `until` (only read when
 * given) and the frontier.
 */
export interface WindowFacts {
  pruned: number | undefined;
  historyFrom?: number;
  sincePacket?: number;
  untilPacket?: number;
  frontier: number | undefined;
  /** The rewrites recorded (db/feedRewrites.ts). */
  rewrites: readonly FeedRewrite[];
}

/** The rewrites of the change stream recorded in `store` (db/feedRewrites.ts). */
export function feedRewrites(store: Store): readonly FeedRewrite[] {
  return parseRewrites(
    cachedStatement(store, LATEST_PACKET_SQL.readMeta).pluck().get(REWRITES_KEY) as string | undefined,
  );
}

/**
 * The head of the change stream: its frontier (the newest packet served, undefined when none is),
 * the current epoch (db/feedRewrites.ts: the number of stores behind its readers so far, 0 before
 * any) and the packet of the newest such store (undefined before any).
 */
export interface FeedHead {
  frontier: number | undefined;
  epoch: number;
  lastRewritten: number | undefined;
}

/** The {@link FeedHead} of a stream whose frontier is `frontier`, given its `rewrites`. */
export function headOf(frontier: number | undefined, rewrites: readonly FeedRewrite[]): FeedHead {
  return { frontier, epoch: currentEpoch(rewrites), lastRewritten: rewrites.at(-1)?.packet };
}

/** The head of the change stream in `store` (read it in one snapshot: db/snapshot.ts). */
export function feedHead(store: Store): FeedHead {
  return headOf(feedFrontier(store), feedRewrites(store));
}

/**
 * The window of `query`, or undefined when the stream serves nothing for it yet.
 * @throws HistoryPrunedError when `after` (or, without it, `since` or `until`) lies before pruned history,
 *   or packets before the pruned history were rewritten since `after`'s epoch
 * @throws HistoryRewrittenError when `after` lies at or after a packet rewritten since its epoch
 */
export function feedWindow(
  store: Store,
  query: FeedBounds,
  rewrites: readonly FeedRewrite[] = feedRewrites(store),
): FeedWindow | undefined {
  const pruned = prunedBefore(store);
  return windowOf(query, {
    rewrites,
    pruned,
    historyFrom: query.after ? undefined : historyFrom(store),
    sincePacket: query.since === undefined ? undefined : firstPacketSince(store, query.since),
    untilPacket: query.until === undefined ? undefined : lastPacketUntil(store, query.until),
    frontier: feedFrontier(store),
  });
}

/**
 * The window of `query` given the facts of the store (the rule of both stores).
 * @throws HistoryPrunedError when `after` (or, without it, `since` or `until`) lies before pruned history,
 *   or packets before the pruned history were rewritten since `after`'s epoch
 * @throws HistoryRewrittenError when `after` lies at or after a packet rewritten since its epoch
 */
export function windowOf(query: FeedBounds, facts: WindowFacts): FeedWindow | undefined {
  const { pruned, sincePacket, frontier } = facts;
  const firstWanted = query.after ? nextPacketOf(query.after) : undefined;
  if (pruned !== undefined && firstWanted !== undefined && firstWanted < pruned) {
    throw new HistoryPrunedError(pruned);
  }
  if (pruned !== undefined && !query.after && sincePacket !== undefined && sincePacket < pruned) {
    throw new HistoryPrunedError(pruned, 'since');
  }
  // An `until` before the history held asks only for pruned events: an empty page would hide them.
  if (
    pruned !== undefined &&
    !query.after &&
    query.until !== undefined &&
    !((facts.untilPacket ?? 0) >= pruned)
  ) {
    throw new HistoryPrunedError(pruned, 'until');
  }
  if (query.after) {
    const from = rewrittenBefore(facts.rewrites, query.epoch ?? 0, query.after);
    // Events stored below the history held cannot come again: the client reloads what it follows
    // (a cursor to read again from there would itself be refused as pruned).
    if (from !== undefined && pruned !== undefined && from < pruned) throw new HistoryPrunedError(pruned);
    if (from !== undefined) throw new HistoryRewrittenError(from, currentEpoch(facts.rewrites));
  }
  const startPacket = Math.max(firstWanted ?? facts.historyFrom ?? 1, sincePacket ?? 1);
  const until = query.until === undefined ? frontier : facts.untilPacket;
  if (frontier === undefined || until === undefined) return undefined;
  const lower: FeedPosition =
    query.after && firstWanted === startPacket ? query.after : { at: 'packetEnd', packet: startPacket - 1 };
  return { lower, bound: Math.min(frontier, until) };
}

/**
 * The statements of the window with `?` parameters, written once for both stores where the
 * dialects agree. An instant is compared as SQLite's `julianday` does (to the millisecond); the
 * PostgreSQL statements (db/postgres/feedWindow.ts) round to the millisecond the same way.
 */
export const FEED_SQL = {
  /** () → the first packet whose content may still change, or null. */
  blocker: `SELECT min(packet) FROM (
       SELECT packet FROM dumps WHERE status = 'NO_CHANGES' AND settled_by = 'TIME'
       UNION ALL SELECT packet FROM replication_packets WHERE status = 'MISSING') AS blockers`,
  /** (since) → first: the first packet at or after it, newest: the newest packet. */
  sincePacket: (instant: (value: string) => string) =>
    `SELECT (SELECT min(number) FROM packets WHERE ${instant('timestamp')} >= ${instant('?')}) AS first,
       (SELECT max(number) FROM packets) AS newest`,
  /** (until) → the newest packet at or before it, or null. */
  untilPacket: (instant: (value: string) => string) =>
    `SELECT max(number) FROM packets WHERE ${instant('timestamp')} <= ${instant('?')}`,
};

const julianday = (value: string) => `julianday(${value})`;
const SINCE_PACKET_SQL = FEED_SQL.sincePacket(julianday);
const UNTIL_PACKET_SQL = FEED_SQL.untilPacket(julianday);

/** The first packet whose TIMESTAMP is at or after `since`; one past the newest when none is. */
function firstPacketSince(store: Store, since: string): number {
  const row = cachedStatement(store, SINCE_PACKET_SQL).get(since) as {
    first: number | null;
    newest: number | null;
  };
  return sincePacketOf(row);
}

/** {@link FEED_SQL}.sincePacket's row as a packet: one past the newest when no packet is at or after it. */
export function sincePacketOf(row: { first: number | null; newest: number | null }): number {
  return row.first ?? (row.newest ?? 0) + 1;
}

/** The newest packet whose TIMESTAMP is at or before `until`; undefined when none is. */
function lastPacketUntil(store: Store, until: string): number | undefined {
  const value = cachedStatement(store, UNTIL_PACKET_SQL).pluck().get(until) as number | null;
  return value ?? undefined;
}

import type pg from 'pg';
import {
  changesWhere,
  emptyPage,
  type FeedChange,
  type FeedPage,
  type FeedQuery,
  feedCountSql,
  feedPageOf,
  type ListFilter,
  removalPageSql,
  removalsWhere,
} from '../changeFeedQueries.js';
import { type FeedRewrite, parseRewrites, REWRITES_KEY } from '../feedRewrites.js';
import {
  FEED_SQL,
  type FeedBounds,
  type FeedHead,
  type FeedWindow,
  frontierOf,
  headOf,
  sincePacketOf,
  windowOf,
} from '../feedWindow.js';
import { OLDEST_PACKET_SQL, PRUNED_BEFORE_SQL } from '../historyQueries.js';
import { changeKey } from '../keys.js';
import { LATEST_PACKET_SQL, type LatestMark, MARK_KEY } from '../latestPacket.js';
import type { RemovalRow } from '../replicationQueries.js';
import { limitClause } from '../statements.js';
import type { PostgresStore } from './client.js';
import { latestPacketNumberOn } from './latestPacket.js';
import { namedSql } from './named.js';
import { inPgReadSnapshot } from './snapshot.js';

/**
 * The change stream on PostgreSQL (docs/POSTGRES_PORT.md, steps 4 and 6): the twins of
 * db/changeFeedQueries.ts readFeedEvents and countFeedEvents, with the same window rule
 * (feedWindow.ts windowOf), the same page rule (feedPageOf) and the shared statements, each read
 * in one REPEATABLE READ READ ONLY transaction on one connection (SQLite: one read transaction).
 */

/** PostgreSQL's filter "column is one of values": an array parameter. */
export const anyList: ListFilter = (column, values) => ({ sql: ` AND ${column} = ANY(?)`, params: [values] });

/**
 * An instant compared as SQLite's `julianday` does, to the millisecond rounded half up, so that
 * `since` and `until` pick the same packets on both stores (a stored TIMESTAMP has microseconds).
 */
const toMillisecond = (value: string) =>
  `date_trunc('milliseconds', CAST(${value} AS timestamptz) + interval '0.5 milliseconds')`;
const SINCE_PACKET_SQL = FEED_SQL.sincePacket(toMillisecond);
const UNTIL_PACKET_SQL = FEED_SQL.untilPacket(toMillisecond);

/** The facts of every window but `since` and `until`, in one statement of the shared texts. */
const FACTS_SQL = `SELECT (${PRUNED_BEFORE_SQL}) AS pruned, (${OLDEST_PACKET_SQL}) AS oldest,
  (${LATEST_PACKET_SQL.readMeta}) AS mark, (${FEED_SQL.blocker}) AS blocker,
  (${LATEST_PACKET_SQL.readMeta}) AS rewrites`;
/** The parameters of {@link FACTS_SQL}. */
const FACTS_PARAMS = [MARK_KEY, REWRITES_KEY];

interface Facts {
  pruned: string | null;
  oldest: number | null;
  mark: string | null;
  blocker: number | null;
  rewrites: string | null;
}

async function one<T>(client: pg.ClientBase, sql: string, params: unknown[]): Promise<T> {
  const { rows } = await client.query(namedSql(sql), params);
  return rows[0] as T;
}

/** The newest complete packet: the mark when it counts from the oldest packet, else a walk. */
async function latestOf(client: pg.ClientBase, facts: Facts): Promise<number | undefined> {
  if (facts.oldest === null) return undefined;
  const mark = facts.mark === null ? undefined : (JSON.parse(facts.mark) as LatestMark);
  if (mark?.from === facts.oldest) return mark.number ?? undefined;
  return latestPacketNumberOn(client);
}

/** The stream's frontier from `facts` (db/feedWindow.ts frontierOf). */
async function frontierOn(client: pg.ClientBase, facts: Facts): Promise<number | undefined> {
  return frontierOf(await latestOf(client, facts), facts.blocker);
}

/**
 * The newest packet the change stream serves, or undefined when none is (db/feedWindow.ts
 * feedFrontier), in one snapshot. Rejects with the driver's error.
 */
export function feedFrontierPostgres(store: PostgresStore): Promise<number | undefined> {
  return inPgReadSnapshot(store.pool, feedFrontierOn);
}

/**
 * The head of the change stream (db/feedReads.ts FeedReads.feedHead): its frontier, the current
 * epoch and the newest rewrite's packet, from the facts statement of every window, in one snapshot. Rejects with the
 * driver's error.
 */
export function feedHeadPostgres(store: PostgresStore): Promise<FeedHead> {
  return inPgReadSnapshot(store.pool, feedHeadOn);
}

/** {@link feedHeadPostgres} on `client`, inside its transaction. */
export async function feedHeadOn(client: pg.ClientBase): Promise<FeedHead> {
  const facts = await one<Facts>(client, FACTS_SQL, FACTS_PARAMS);
  return headOf(await frontierOn(client, facts), parseRewrites(facts.rewrites));
}

/** The frontier of the change stream (db/feedWindow.ts feedFrontier) on `client`, inside its transaction. */
export async function feedFrontierOn(client: pg.ClientBase): Promise<number | undefined> {
  return frontierOn(client, await one<Facts>(client, FACTS_SQL, FACTS_PARAMS));
}

/**
 * The window of `query` read on `client` (db/feedWindow.ts feedWindow), and the epoch it was read
 * in (db/feedRewrites.ts).
 */
async function feedWindowOn(
  client: pg.ClientBase,
  query: FeedBounds,
): Promise<{ window: FeedWindow | undefined; rewrites: readonly FeedRewrite[] }> {
  const facts = await one<Facts>(client, FACTS_SQL, FACTS_PARAMS);
  const rewrites = parseRewrites(facts.rewrites);
  const pruned = facts.pruned === null ? undefined : Number(facts.pruned);
  const since =
    query.since === undefined ? undefined : sincePacketOf(await one(client, SINCE_PACKET_SQL, [query.since]));
  const until =
    query.until === undefined
      ? undefined
      : ((await one<{ max: number | null }>(client, UNTIL_PACKET_SQL, [query.until])).max ?? undefined);
  const window = windowOf(query, {
    rewrites,
    pruned,
    historyFrom: pruned ?? facts.oldest ?? undefined,
    sincePacket: since,
    untilPacket: until,
    frontier: await frontierOn(client, facts),
  });
  return { window, rewrites };
}

/**
 * The changes of a page with their packet's TIMESTAMP, a row per change (not SQLite's one BLOB:
 * db/postgres/changeReads.ts says why); the WHERE terms are the shared ones.
 */
export function changePageSql(where: string): string {
  return `SELECT id, mbid, data, (SELECT p.timestamp FROM packets p WHERE p.number = changes.packet)
    FROM changes WHERE ${where} ORDER BY id LIMIT ?`;
}

async function readChanges(client: pg.ClientBase, window: FeedWindow, query: FeedQuery, limit: number) {
  const { sql, params } = changesWhere(window, query, anyList);
  const { rows } = await client.query<[number, string, string, string | null]>(
    namedSql(changePageSql(sql), 'array'),
    [...params, limit],
  );
  return rows.map(
    ([id, mbid, data, timestamp]): FeedChange => ({
      id,
      ...changeKey(id),
      mbid,
      data: Buffer.from(data, 'utf8'),
      timestamp,
    }),
  );
}

async function readRemovals(client: pg.ClientBase, window: FeedWindow, query: FeedQuery, limit: number) {
  const { sql, params } = removalsWhere(window, query, anyList);
  const { rows } = await client.query<
    [string, RemovalRow['entity'], number, RemovalRow['kind'], string | null, string | null]
  >(namedSql(removalPageSql(sql, 'LIMIT ?'), 'array'), [...params, limit]);
  return rows.map(
    ([mbid, entity, packet, kind, mergedInto, timestamp]): RemovalRow => ({
      mbid,
      entity,
      packet,
      kind,
      mergedInto,
      timestamp,
    }),
  );
}

/**
 * Up to `query.first` events after `query.after` (db/changeFeedQueries.ts readFeedEvents), in one
 * snapshot. Rejects with HistoryPrunedError, HistoryRewrittenError, a RangeError for a bad
 * `first`, or the driver's error.
 */
export function readFeedEventsPostgres(store: PostgresStore, query: FeedQuery): Promise<FeedPage> {
  return inPgReadSnapshot(store.pool, async (client) => {
    const { window, rewrites } = await feedWindowOn(client, query);
    if (window === undefined) return emptyPage(query, rewrites);
    const limit = query.first + 1;
    limitClause(limit);
    const [changes, removals] = [
      await readChanges(client, window, query, limit),
      await readRemovals(client, window, query, limit),
    ];
    return feedPageOf(query, { ...window, rewrites }, changes, removals);
  });
}

/**
 * Number of events from `query.after` on (db/changeFeedQueries.ts countFeedEvents), in one
 * snapshot. Rejects with HistoryPrunedError or the driver's error.
 */
export function countFeedEventsPostgres(
  store: PostgresStore,
  query: Omit<FeedQuery, 'first'>,
): Promise<number> {
  return inPgReadSnapshot(store.pool, async (client) => {
    const { window } = await feedWindowOn(client, query);
    if (window === undefined) return 0;
    const { changes, removals } = feedCountSql(window, query, anyList);
    // The two shared counts in one statement: one round trip fewer.
    const sql = `SELECT (${changes.sql}) + (${removals.sql}) AS count`;
    return (await one<{ count: number }>(client, sql, [...changes.params, ...removals.params])).count;
  });
}

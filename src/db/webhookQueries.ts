import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { epochPositionText, nextPacketOf, parseEpochPosition } from './feedPosition.js';
import { type FeedRewrite, rewrittenBefore } from './feedRewrites.js';
import { type FeedHead, feedHead, feedRewrites } from './feedWindow.js';
import { cachedStatement } from './statements.js';
import { tableExists } from './status.js';

/**
 * The `webhooks` table (README, Webhooks): one row per webhook with its place in the change stream
 * and its delivery record. Cold bookkeeping, a few rows: drizzle's query builder.
 */

/** A webhook as the webhooks file gives it, without its secret. */
export interface WebhookTarget {
  name: string;
  /** The URL without credentials, query or fragment. */
  displayUrl: string;
  entities: readonly EntityType[] | null;
  mbids: readonly string[] | null;
}

/** A webhook's stored state. Times are ISO 8601 UTC; null when it never happened. */
export interface WebhookState {
  name: string;
  url: string;
  entities: EntityType[] | null;
  mbids: string[] | null;
  /**
   * Change stream position (db/feedPosition.ts text) after the last acknowledged event, or where
   * the webhook started; null: from the start of the history held.
   */
  cursor: string | null;
  deliveredPacket: number | null;
  /** Failed attempts since the last 2xx. */
  attempts: number;
  lastError: string | null;
  lastErrorAt: string | null;
  nextRetryAt: string | null;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  deliveredEvents: number;
  deliveries: number;
  failedDeliveries: number;
  addedAt: string;
  retiredAt: string | null;
}

const json = (list: readonly string[] | null) => (list ? JSON.stringify(list) : null);

/**
 * The statements of the `webhooks` table with `?` parameters, written once for both stores
 * (PostgreSQL numbers them, db/postgres/sql.ts pgSql; its webhooks are db/postgres/webhooks.ts).
 * `entities` / `mbids` are JSON text on SQLite and jsonb on PostgreSQL: written as JSON text,
 * read as text (`CAST`), parsed by {@link webhookStateOf}.
 */
export const WEBHOOK_SQL = {
  /**
   * () → every webhook's row, by name in code point order: `collate` is '' on SQLite (binary) and
   * ` COLLATE "C"` on PostgreSQL, whatever the database's collation.
   */
  states: (collate: string) =>
    `SELECT name, url, CAST(entities AS TEXT) AS entities, CAST(mbids AS TEXT) AS mbids, cursor,
      delivered_packet AS "deliveredPacket", attempts, last_error AS "lastError",
      last_error_at AS "lastErrorAt", next_retry_at AS "nextRetryAt", last_attempt_at AS "lastAttemptAt",
      last_success_at AS "lastSuccessAt", delivered_events AS "deliveredEvents", deliveries,
      failed_deliveries AS "failedDeliveries", added_at AS "addedAt", retired_at AS "retiredAt"
    FROM webhooks ORDER BY name${collate}`,
  /** (name, url, entities, mbids, cursor, addedAt): a new webhook, or a known one's URL and filters. */
  register: `INSERT INTO webhooks (name, url, entities, mbids, cursor, added_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET url = excluded.url, entities = excluded.entities,
      mbids = excluded.mbids, retired_at = NULL`,
  /** (retiredAt, name): the webhooks file no longer lists it. */
  retire: 'UPDATE webhooks SET retired_at = ?, next_retry_at = NULL WHERE name = ? AND retired_at IS NULL',
  /** (cursor, packet or null, at, at, events, name): a 2xx. */
  delivered: `UPDATE webhooks SET cursor = ?, delivered_packet = coalesce(?, delivered_packet), attempts = 0,
      next_retry_at = NULL, last_attempt_at = ?, last_success_at = ?,
      delivered_events = delivered_events + ?, deliveries = deliveries + 1
    WHERE name = ?`,
  /** (cursor, packet or null, name): past events the filters left out. */
  position: 'UPDATE webhooks SET cursor = ?, delivered_packet = coalesce(?, delivered_packet) WHERE name = ?',
  /** (cursor, packet, packet, name): back to a packet's start after a rewrite, delivered up to the one before. */
  rewound: `UPDATE webhooks SET cursor = ?,
      delivered_packet = CASE WHEN delivered_packet > ? THEN ? ELSE delivered_packet END
    WHERE name = ?`,
  /** (error, at, at, nextRetryAt, name): a failed POST. */
  failed: `UPDATE webhooks SET attempts = attempts + 1, last_error = ?, last_error_at = ?, last_attempt_at = ?,
      next_retry_at = ?, failed_deliveries = failed_deliveries + 1
    WHERE name = ?`,
};

/** A row of {@link WEBHOOK_SQL}.states as a {@link WebhookState}: its lists parsed. */
export function webhookStateOf(
  row: Omit<WebhookState, 'entities' | 'mbids'> & {
    entities: string | null;
    mbids: string | null;
  },
): WebhookState {
  return {
    ...row,
    entities: row.entities === null ? null : (JSON.parse(row.entities) as EntityType[]),
    mbids: row.mbids === null ? null : (JSON.parse(row.mbids) as string[]),
  };
}

/**
 * Where a newly registered webhook starts: after the newest packet the stream serves, in the
 * current epoch (db/feedRewrites.ts); null: from the start.
 */
export function webhookStart({ frontier, epoch }: FeedHead): string | null {
  return frontier === undefined
    ? null
    : epochPositionText({ position: { at: 'packetEnd', packet: frontier }, epoch });
}

/** {@link WEBHOOK_SQL}.register's parameters for `target`. */
export function registerParams(target: WebhookTarget, start: string | null, now: string): unknown[] {
  return [target.name, target.displayUrl, json(target.entities), json(target.mbids), start, now];
}

/** The active webhooks (by name) that the webhooks file of this run no longer lists. */
export function retiredBy(states: readonly WebhookState[], targets: readonly WebhookTarget[]): string[] {
  const listed = new Set(targets.map((t) => t.name));
  return states.filter((w) => w.retiredAt === null && !listed.has(w.name)).map((w) => w.name);
}

/**
 * Records the webhooks of this run's webhooks file: a new one starts after the newest packet the
 * change stream serves (it is not sent the history already there; on an empty database, from the
 * start); a known one keeps its cursor and takes
 * the file's URL and filters; rows the file no longer lists are marked retired (their cursor kept).
 */
export function registerWebhooks(store: Store, targets: readonly WebhookTarget[], now: string): void {
  store.sqlite.transaction(() => {
    const start = webhookStart(feedHead(store));
    for (const t of targets)
      cachedStatement(store, WEBHOOK_SQL.register).run(...registerParams(t, start, now));
    for (const name of retiredBy(webhookStates(store), targets))
      cachedStatement(store, WEBHOOK_SQL.retire).run(now, name);
  })();
}

const SQLITE_STATES = WEBHOOK_SQL.states('');

/** Every webhook's state, by name; none when the database predates webhooks (read-only, unmigrated). */
export function webhookStates(store: Store): WebhookState[] {
  if (!tableExists(store, 'webhooks')) return [];
  return (cachedStatement(store, SQLITE_STATES).all() as Parameters<typeof webhookStateOf>[0][]).map(
    webhookStateOf,
  );
}

/** One webhook's state, or undefined when it is not registered. */
export function webhookState(store: Store, name: string): WebhookState | undefined {
  return webhookStates(store).find((w) => w.name === name);
}

/** What a 2xx records: the cursor past the events sent, the packet of the last one, when. */
export interface Delivered {
  cursor: string;
  packet: number | null;
  events: number;
  at: string;
}

/** {@link WEBHOOK_SQL}.delivered's parameters. */
export function deliveredParams(name: string, d: Delivered): unknown[] {
  return [d.cursor, packetDoneAt(d.cursor) ?? d.packet, d.at, d.at, d.events, name];
}

/**
 * The packet a webhook has been sent every matching event of once at `cursor`: the packet a
 * position at a packet's end closes (the filters may have matched nothing there), else null (a
 * position after an event says no more than that event's packet).
 */
export function packetDoneAt(cursor: string): number | null {
  const position = parseEpochPosition(cursor)?.position;
  return position?.at === 'packetEnd' ? position.packet : null;
}

/** {@link WEBHOOK_SQL}.position's parameters. */
export function positionParams(name: string, cursor: string): unknown[] {
  return [cursor, packetDoneAt(cursor), name];
}

/** What a failed POST records (no secret, no URL credentials in `error`). */
export interface Failed {
  error: string;
  at: string;
  nextRetryAt: string;
}

/** {@link WEBHOOK_SQL}.failed's parameters. */
export function failedParams(name: string, f: Failed): unknown[] {
  return [f.error, f.at, f.at, f.nextRetryAt, name];
}

/**
 * A POST of `events` events was answered 2xx: the cursor moves past them, the failure count
 * resets.
 */
export function recordDelivered(store: Store, name: string, delivered: Delivered): void {
  cachedStatement(store, WEBHOOK_SQL.delivered).run(...deliveredParams(name, delivered));
}

/** Events the filters left out: the cursor moves past them without a POST. */
export function recordPosition(store: Store, name: string, cursor: string): void {
  cachedStatement(store, WEBHOOK_SQL.position).run(...positionParams(name, cursor));
}

/**
 * Older packets were stored behind the webhook's position (db/feedRewrites.ts): the cursor moves
 * back to `cursor`, the start of `packet`, whose events are sent again; what it has been sent
 * counts up to the packet before (status, /metrics), so that what waits shows.
 */
export function recordRewound(store: Store, name: string, cursor: string, packet: number): void {
  cachedStatement(store, WEBHOOK_SQL.rewound).run(...rewoundParams(name, cursor, packet));
}

/** The parameters of {@link WEBHOOK_SQL}.rewound. */
export function rewoundParams(name: string, cursor: string, packet: number): unknown[] {
  return [cursor, packet - 1, packet - 1, name];
}

/** A POST failed with `error` (no secret, no URL credentials); tried again at `nextRetryAt`. */
export function recordFailed(store: Store, name: string, failed: Failed): void {
  cachedStatement(store, WEBHOOK_SQL.failed).run(...failedParams(name, failed));
}

/**
 * The oldest packet whose events a webhook still listed in the webhooks file has not been sent
 * (`--keep-history` keeps it, sync/prune.ts); 0 when one has been sent nothing yet from the start
 * of the history; undefined when no active webhook waits for anything held.
 */
export function oldestPacketAwaited(store: Store): number | undefined {
  return oldestPacketAwaitedOf(webhookStates(store), feedRewrites(store));
}

/**
 * The webhooks' columns {@link oldestPacketAwaitedOf} reads, with `?` parameters none: written once
 * for the PostgreSQL pruning (sync/postgres/prune.ts); SQLite reads them through drizzle.
 */
export const AWAITING_WEBHOOKS_SQL = 'SELECT cursor, retired_at AS "retiredAt" FROM webhooks';

/**
 * {@link oldestPacketAwaited} over the webhooks' `cursor` (a feed position with its epoch as text,
 * null before a first delivery) and `retiredAt` (ISO 8601, null while the webhooks file lists
 * it), given the stream's `rewrites` (db/feedRewrites.ts): a webhook whose position lies at or
 * after a packet stored again since is sent again from that packet, so it awaits that one.
 */
export function oldestPacketAwaitedOf(
  states: readonly { cursor: string | null; retiredAt: string | null }[],
  rewrites: readonly FeedRewrite[],
): number | undefined {
  let oldest: number | undefined;
  for (const w of states) {
    if (w.retiredAt !== null) continue;
    const stored = w.cursor === null ? undefined : parseEpochPosition(w.cursor);
    const packet =
      stored === undefined
        ? 0
        : (rewrittenBefore(rewrites, stored.epoch, stored.position) ?? nextPacketOf(stored.position));
    oldest = oldest === undefined ? packet : Math.min(oldest, packet);
  }
  return oldest;
}

import { and, asc, eq, isNull, notInArray, sql } from 'drizzle-orm';
import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { feedPositionText, nextPacketOf, parseFeedPosition } from './feedPosition.js';
import { feedFrontier } from './feedWindow.js';
import { webhooks } from './schema.js';
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
 * Records the webhooks of this run's webhooks file: a new one starts after the newest packet the
 * change stream serves (it is not sent the history already there; on an empty database, from the
 * start); a known one keeps its cursor and takes
 * the file's URL and filters; rows the file no longer lists are marked retired (their cursor kept).
 */
export function registerWebhooks(store: Store, targets: readonly WebhookTarget[], now: string): void {
  store.db.transaction((tx) => {
    const frontier = feedFrontier(store);
    const start = frontier === undefined ? null : feedPositionText({ at: 'packetEnd', packet: frontier });
    for (const t of targets) {
      const values = { url: t.displayUrl, entities: json(t.entities), mbids: json(t.mbids) };
      tx.insert(webhooks)
        .values({ name: t.name, ...values, cursor: start, addedAt: now })
        .onConflictDoUpdate({ target: webhooks.name, set: { ...values, retiredAt: null } })
        .run();
    }
    const names = targets.map((t) => t.name);
    tx.update(webhooks)
      .set({ retiredAt: now })
      .where(and(isNull(webhooks.retiredAt), names.length ? notInArray(webhooks.name, names) : undefined))
      .run();
  });
}

/** Every webhook's state, by name; none when the database predates webhooks (read-only, unmigrated). */
export function webhookStates(store: Store): WebhookState[] {
  if (!tableExists(store, 'webhooks')) return [];
  return store.db
    .select()
    .from(webhooks)
    .orderBy(asc(webhooks.name))
    .all()
    .map((row) => ({
      ...row,
      entities: row.entities ? (JSON.parse(row.entities) as EntityType[]) : null,
      mbids: row.mbids ? (JSON.parse(row.mbids) as string[]) : null,
    }));
}

/** One webhook's state, or undefined when it is not registered. */
export function webhookState(store: Store, name: string): WebhookState | undefined {
  return webhookStates(store).find((w) => w.name === name);
}

/**
 * A POST of `events` events was answered 2xx: the cursor moves past them, the failure count
 * resets.
 */
export function recordDelivered(
  store: Store,
  name: string,
  delivered: { cursor: string; packet: number | null; events: number; at: string },
): void {
  store.db
    .update(webhooks)
    .set({
      cursor: delivered.cursor,
      deliveredPacket: sql`coalesce(${delivered.packet}, ${webhooks.deliveredPacket})`,
      attempts: 0,
      nextRetryAt: null,
      lastAttemptAt: delivered.at,
      lastSuccessAt: delivered.at,
      deliveredEvents: sql`${webhooks.deliveredEvents} + ${delivered.events}`,
      deliveries: sql`${webhooks.deliveries} + 1`,
    })
    .where(eq(webhooks.name, name))
    .run();
}

/** Events the filters left out: the cursor moves past them without a POST. */
export function recordSkipped(store: Store, name: string, cursor: string): void {
  store.db.update(webhooks).set({ cursor }).where(eq(webhooks.name, name)).run();
}

/** A POST failed with `error` (no secret, no URL credentials); tried again at `nextRetryAt`. */
export function recordFailed(
  store: Store,
  name: string,
  failed: { error: string; at: string; nextRetryAt: string },
): void {
  store.db
    .update(webhooks)
    .set({
      attempts: sql`${webhooks.attempts} + 1`,
      lastError: failed.error,
      lastErrorAt: failed.at,
      lastAttemptAt: failed.at,
      nextRetryAt: failed.nextRetryAt,
      failedDeliveries: sql`${webhooks.failedDeliveries} + 1`,
    })
    .where(eq(webhooks.name, name))
    .run();
}

/**
 * The oldest packet whose events a webhook still listed in the webhooks file has not been sent
 * (`--keep-history` keeps it, sync/prune.ts); 0 when one has been sent nothing yet from the start
 * of the history; undefined when no active webhook waits for anything held.
 */
export function oldestPacketAwaited(store: Store): number | undefined {
  return oldestPacketAwaitedOf(webhookStates(store));
}

/**
 * The webhooks' columns {@link oldestPacketAwaitedOf} reads, with `?` parameters none: written once
 * for the PostgreSQL pruning (sync/postgres/prune.ts); SQLite reads them through drizzle.
 */
export const AWAITING_WEBHOOKS_SQL = 'SELECT cursor, retired_at AS "retiredAt" FROM webhooks';

/**
 * {@link oldestPacketAwaited} over the webhooks' `cursor` (a feed position as text, null before a
 * first delivery) and `retiredAt` (ISO 8601, null while the webhooks file lists it).
 */
export function oldestPacketAwaitedOf(
  states: readonly { cursor: string | null; retiredAt: string | null }[],
): number | undefined {
  let oldest: number | undefined;
  for (const w of states) {
    if (w.retiredAt !== null) continue;
    const position = w.cursor === null ? undefined : parseFeedPosition(w.cursor);
    const packet = position === undefined ? 0 : nextPacketOf(position);
    oldest = oldest === undefined ? packet : Math.min(oldest, packet);
  }
  return oldest;
}

import { setTimeout as sleep } from 'node:timers/promises';
import { type FeedPage, type FeedQuery, readFeedEvents } from './changeFeedQueries.js';
import type { Store } from './client.js';
import {
  type Delivered,
  type Failed,
  recordDelivered,
  recordFailed,
  recordPosition,
  recordRewound,
  registerWebhooks,
  type WebhookState,
  type WebhookTarget,
  webhookStates,
} from './webhookQueries.js';

/**
 * What webhook delivery (webhooks/*) reads and writes, on either store (issue 17,
 * docs/POSTGRES_PORT.md step 7): the `webhooks` table through the statements of
 * db/webhookQueries.ts (written once) and the change stream. {@link sqliteWebhookStore} runs on the
 * sync's own connection; `postgresWebhookStore` (db/postgres/webhooks.ts) on the sync's pool.
 * Every method rejects with the store's error.
 */
export interface WebhookStore {
  /** Records this run's webhooks file (db/webhookQueries.ts registerWebhooks), in one transaction. */
  register(targets: readonly WebhookTarget[], now: string): Promise<void>;
  /** Every webhook's state, by name in code point order. */
  states(): Promise<WebhookState[]>;
  /** A 2xx: the cursor moves past the events sent, the failure count resets. */
  recordDelivered(name: string, delivered: Delivered): Promise<void>;
  /** Events the filters left out: the cursor moves past them without a POST. */
  recordPosition(name: string, cursor: string): Promise<void>;
  /**
   * Older packets were stored behind the position: it moves back to `cursor`, the start of
   * `packet`, and delivered counts up to the packet before (db/webhookQueries.ts recordRewound).
   */
  recordRewound(name: string, cursor: string, packet: number): Promise<void>;
  /** A failed POST, tried again at `failed.nextRetryAt`. */
  recordFailed(name: string, failed: Failed): Promise<void>;
  /**
   * Events of the change stream after `query.after` up to its frontier, in one snapshot
   * (db/changeFeedQueries.ts readFeedEvents); rejects with HistoryPrunedError when pruned.
   */
  readFeedEvents(query: FeedQuery): Promise<FeedPage>;
  /**
   * Resolves when the store may be read and written for delivery: SQLite shares the sync's
   * connection and waits until no sync transaction is open on it (a read inside one would see a
   * dump not yet committed); PostgreSQL at once (its own pooled connections see committed rows only).
   * @throws the signal's reason when `signal` aborts while waiting
   */
  idle(signal?: AbortSignal): Promise<void>;
}

/**
 * Resolves once `store`'s connection has no transaction open (checked every 20 ms): the sync's
 * transactions span awaits (sync/transaction.ts), and delivery must neither read a dump before its
 * COMMIT nor write inside it.
 * @throws the signal's reason when `signal` aborts while waiting
 */
export async function outsideTransaction(store: Store, signal?: AbortSignal): Promise<void> {
  while (store.sqlite.inTransaction) await sleep(20, undefined, { signal });
}

/**
 * Runs `run` on `store`'s connection once no transaction is open on it, checked in the same tick
 * as the call: a sync sharing the connection may begin one at any await before it.
 */
async function whenOutsideTransaction<T>(store: Store, run: () => T): Promise<T> {
  while (store.sqlite.inTransaction) await sleep(20);
  return run();
}

/**
 * {@link WebhookStore} over a SQLite store: the synchronous functions, each run when no sync
 * transaction is open on the connection (follow mode shares it), in promises.
 */
export function sqliteWebhookStore(store: Store): WebhookStore {
  const outside = <T>(run: () => T) => whenOutsideTransaction(store, run);
  return {
    register: (targets, now) => outside(() => registerWebhooks(store, targets, now)),
    states: () => outside(() => webhookStates(store)),
    recordDelivered: (name, delivered) => outside(() => recordDelivered(store, name, delivered)),
    recordPosition: (name, cursor) => outside(() => recordPosition(store, name, cursor)),
    recordRewound: (name, cursor, packet) => outside(() => recordRewound(store, name, cursor, packet)),
    recordFailed: (name, failed) => outside(() => recordFailed(store, name, failed)),
    readFeedEvents: (query) => outside(() => readFeedEvents(store, query)),
    idle: (signal) => outsideTransaction(store, signal),
  };
}

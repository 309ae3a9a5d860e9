import {
  deliveredParams,
  failedParams,
  positionParams,
  registerParams,
  retiredBy,
  rewoundParams,
  WEBHOOK_SQL,
  type WebhookState,
  webhookStart,
  webhookStateOf,
} from '../webhookQueries.js';
import type { WebhookStore } from '../webhookStore.js';
import { feedHeadOn, readFeedEventsPostgres } from './changeFeedReads.js';
import type { PostgresStore } from './client.js';
import { CODE_POINT_ORDER, inPgTransaction, type PgQueryable, pgRows } from './sql.js';

/** Code point order, as SQLite's binary collation, whatever the database's collation. */
const STATES_SQL = WEBHOOK_SQL.states(CODE_POINT_ORDER);

async function statesOn(on: PgQueryable): Promise<WebhookState[]> {
  return (await pgRows<Parameters<typeof webhookStateOf>[0]>(on, STATES_SQL)).map(webhookStateOf);
}

/** Every webhook's state on PostgreSQL, by name in code point order (for delivery and GraphQL). */
export function webhookStatesPostgres(store: PostgresStore): Promise<WebhookState[]> {
  return statesOn(store.pool);
}

/**
 * {@link WebhookStore} over a PostgreSQL store (docs/POSTGRES_PORT.md, step 7): the statements of
 * db/webhookQueries.ts on the pool (each an autocommitted statement; registration in one
 * transaction that reads the stream's frontier too), the change stream of db/postgres/changeFeedReads.ts.
 * Delivery needs no wait for the sync: a pooled connection never sees an uncommitted transaction.
 */
export function postgresWebhookStore(store: PostgresStore): WebhookStore {
  return {
    register: (targets, now) =>
      inPgTransaction(store.pool, async (client) => {
        const start = webhookStart(await feedHeadOn(client));
        for (const t of targets) await pgRows(client, WEBHOOK_SQL.register, registerParams(t, start, now));
        for (const name of retiredBy(await statesOn(client), targets))
          await pgRows(client, WEBHOOK_SQL.retire, [now, name]);
      }),
    states: () => statesOn(store.pool),
    recordDelivered: async (name, delivered) => {
      await pgRows(store.pool, WEBHOOK_SQL.delivered, deliveredParams(name, delivered));
    },
    recordPosition: async (name, cursor) => {
      await pgRows(store.pool, WEBHOOK_SQL.position, positionParams(name, cursor));
    },
    recordRewound: async (name, cursor, packet) => {
      await pgRows(store.pool, WEBHOOK_SQL.rewound, rewoundParams(name, cursor, packet));
    },
    recordFailed: async (name, failed) => {
      await pgRows(store.pool, WEBHOOK_SQL.failed, failedParams(name, failed));
    },
    readFeedEvents: (query) => readFeedEventsPostgres(store, query),
    idle: async () => {},
  };
}

import type { WebhookStore } from '../db/webhookStore.js';
import type { Logger } from '../logger.js';
import type { SyncContext } from '../sync/context.js';
import { combineObservers } from '../sync/observer.js';
import { type DeliveryContext, type DeliveryRun, deliverAll, type WebhookEndpoint } from './deliver.js';
import { startWebhookDispatcher, type WebhookDispatcher } from './dispatcher.js';
import { changeStreamSource } from './source.js';

/** Pauses between the attempts of `sync --once` before it gives up for this run (README, Webhooks). */
export const ONCE_RETRY_PAUSES_MS: readonly number[] = [1_000, 3_000];

/** The webhooks of one sync process. */
export interface SyncWebhooks {
  /** `ctx` whose completed packets and finished passes start delivery (follow mode). */
  watch<T extends SyncContext>(ctx: T): T;
  /** Follow mode: delivers what waits from earlier runs, then after every packet, until {@link stop}. */
  follow(): void;
  /** `sync --once`, after its pass: delivers everything now, retrying a failing receiver briefly. */
  deliverNow(): Promise<DeliveryRun[]>;
  stop(): Promise<void>;
}

/**
 * Registers `endpoints` in the `webhooks` table (new ones start after the newest packet the
 * change stream serves; ones no longer listed are marked retired) and prepares their delivery
 * through `store` (either store: on SQLite the sync's own connection, read and written only
 * between its transactions; on PostgreSQL the sync's pool). Delivery is driven by the packets the
 * sync completes in this process and by its passes (`watch`), whatever the store.
 * @throws the store's error when the webhooks cannot be registered
 */
export async function syncWebhooks(options: {
  store: WebhookStore;
  endpoints: readonly WebhookEndpoint[];
  logger: Logger;
  signal: AbortSignal;
  userAgent: string;
}): Promise<SyncWebhooks> {
  const { store, endpoints, signal } = options;
  await store.register(endpoints, new Date().toISOString());
  const ctx: DeliveryContext = {
    store,
    source: changeStreamSource,
    logger: options.logger,
    userAgent: options.userAgent,
    signal,
    idle: () => store.idle(signal),
  };
  let dispatcher: WebhookDispatcher | undefined;
  const kick = () => dispatcher?.kick();
  return {
    watch: (sync) => ({
      ...sync,
      observe: {
        ...sync.observe,
        observer: combineObservers(sync.observe.observer, { passFinished: kick }),
        onPacketSynced: (packet: number) => {
          sync.observe.onPacketSynced?.(packet);
          kick();
        },
      },
    }),
    follow: () => {
      if (endpoints.length === 0) return;
      dispatcher = startWebhookDispatcher(ctx, endpoints);
      dispatcher.kick();
    },
    deliverNow: () => deliverAll({ ...ctx, retryPausesMs: ONCE_RETRY_PAUSES_MS }, endpoints),
    stop: async () => {
      await dispatcher?.stop();
    },
  };
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookState } from '../db/webhookQueries.js';
import type { WebhookStore } from '../db/webhookStore.js';
import type { EntityType } from '../feed/entities.js';
import type { Logger } from '../logger.js';
import { deliveryId, postBatch, webhookBody } from './request.js';
import { type WebhookEventPage, type WebhookEventSource, WebhookSourceError } from './source.js';

/** A webhook as delivery needs it: the webhooks file's entry (config/webhooksFile.ts). */
export interface WebhookEndpoint {
  name: string;
  url: string;
  displayUrl: string;
  secret: string;
  entities: readonly EntityType[] | null;
  mbids: readonly string[] | null;
  batchSize: number;
}

/**
 * Milliseconds from the n-th failed attempt in a row (1-based, index n − 1) to the next one in follow
 * mode; past the end, the last. README, Webhooks.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  10_000, 30_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000,
];

/** Delay before the next attempt after `attempts` failures in a row, in milliseconds. */
export function retryDelayMs(attempts: number, schedule: readonly number[] = RETRY_SCHEDULE_MS): number {
  return schedule[Math.min(Math.max(attempts, 1), schedule.length) - 1]!;
}

/** How delivery runs. */
export interface DeliveryContext {
  /** The database (either store): the webhooks table and the change stream. */
  store: WebhookStore;
  source: WebhookEventSource;
  logger: Logger;
  /** `livefeed/<version>`. */
  userAgent: string;
  /** Stops delivery (SIGTERM); a POST in flight is abandoned, its events sent again next time. */
  signal?: AbortSignal;
  now?: () => Date;
  /**
   * Resolves when `store` may be read and written (WebhookStore.idle: on SQLite, follow mode shares
   * the sync's connection and waits until no sync transaction is open).
   */
  idle?: () => Promise<void>;
  /** Pauses between attempts within one run (`sync --once`); after them the run gives up. Default none. */
  retryPausesMs?: readonly number[];
  /** Leave a failing webhook alone until its stored next retry time (follow mode). */
  honorNextRetry?: boolean;
  /** Most milliseconds of one POST (default request.ts POST_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Delays after 1, 2, ... failures in a row before the next retry time; default RETRY_SCHEDULE_MS. */
  retryScheduleMs?: readonly number[];
}

/** How one run of a webhook ended. */
export interface DeliveryRun {
  name: string;
  /** `caught-up`: nothing left to send now; `failed`: gave up for this run; `waiting`: its retry time has not come. */
  outcome: 'caught-up' | 'failed' | 'waiting';
  /** Events acknowledged in this run. */
  delivered: number;
  /** The last failure of this run. */
  error?: string;
}

/**
 * Sends `endpoint` every event after its stored position, in batches of `batchSize`, in stream
 * order; the position moves forward only after a 2xx, so a failed or abandoned POST is sent again
 * (at least once), and back only when older packets were stored behind it (db/feedRewrites.ts).
 * Failures are stored (attempts, last error, next retry) and logged without the secret.
 * @throws the signal's reason when stopped; Error when the webhook is not registered
 */
export async function deliverWebhook(ctx: DeliveryContext, endpoint: WebhookEndpoint): Promise<DeliveryRun> {
  const now = ctx.now ?? (() => new Date());
  const run: DeliveryRun = { name: endpoint.name, outcome: 'caught-up', delivered: 0 };
  let failuresThisRun = 0;
  for (;;) {
    ctx.signal?.throwIfAborted();
    await ctx.idle?.();
    const state = (await ctx.store.states()).find((w) => w.name === endpoint.name);
    if (!state) throw new Error(`webhook ${endpoint.name} is not registered`);
    if (ctx.honorNextRetry && state.nextRetryAt && Date.parse(state.nextRetryAt) > now().getTime())
      return { ...run, outcome: 'waiting' };
    const read = await readPage(ctx, endpoint, state);
    let error: string;
    if ('page' in read) {
      const { page } = read;
      if (page.rewound) await rewind(ctx, endpoint, page.rewound);
      if (page.events.length === 0) {
        if (page.next !== null && page.next !== state.cursor)
          await ctx.store.recordPosition(endpoint.name, page.next);
        return run;
      }
      const outcome = await postBatch({
        url: endpoint.url,
        secret: endpoint.secret,
        body: webhookBody(endpoint.name, page.events, page.hasMore),
        delivery: deliveryId(endpoint.name, page.events),
        userAgent: ctx.userAgent,
        signal: ctx.signal,
        timeoutMs: ctx.timeoutMs,
      });
      await ctx.idle?.();
      if (outcome.ok) {
        await acknowledge(ctx, endpoint, page, now().toISOString());
        run.delivered += page.events.length;
        failuresThisRun = 0;
        continue;
      }
      error = outcome.error;
    } else error = read.error;
    run.error = error;
    await fail(ctx, endpoint, state, error, now());
    const pause = ctx.retryPausesMs?.[failuresThisRun++];
    if (pause === undefined) return { ...run, outcome: 'failed' };
    await sleep(pause, undefined, { signal: ctx.signal });
  }
}

/** The next page for `endpoint`, or why it cannot be read (history pruned). */
async function readPage(
  ctx: DeliveryContext,
  endpoint: WebhookEndpoint,
  state: WebhookState,
): Promise<{ page: WebhookEventPage } | { error: string }> {
  try {
    return {
      page: await ctx.source(ctx.store, {
        after: state.cursor,
        first: endpoint.batchSize,
        entities: endpoint.entities,
        mbids: endpoint.mbids,
      }),
    };
  } catch (error) {
    if (error instanceof WebhookSourceError) return { error: error.message };
    throw error;
  }
}

/**
 * Older packets were stored again behind the webhook's position: it is sent them again, from the
 * position stored now, so that a failed POST is retried from there without a second warning.
 */
async function rewind(
  ctx: DeliveryContext,
  endpoint: WebhookEndpoint,
  { packet, position }: { packet: number; position: string },
): Promise<void> {
  await ctx.store.recordRewound(endpoint.name, position, packet);
  ctx.logger.warn(
    { event: 'webhook-rewound', webhook: endpoint.name, url: endpoint.displayUrl, packet },
    `webhook ${endpoint.name}: events of packet ${packet} and later were stored behind its position (livefeed ` +
      'import, sync --from or bootstrap); sending the events from there again, in order',
  );
}

async function acknowledge(
  ctx: DeliveryContext,
  endpoint: WebhookEndpoint,
  page: WebhookEventPage,
  at: string,
) {
  const last = page.events.at(-1)!;
  // After the last event, or past it up to the stream's frontier (what the filters left out); with
  // the epoch the page was read in, which an event's id may not carry (webhooks/source.ts).
  const cursor = page.next ?? last.id;
  await ctx.store.recordDelivered(endpoint.name, {
    cursor,
    packet: last.packet,
    events: page.events.length,
    at,
  });
  ctx.logger.info(
    {
      event: 'webhook-delivered',
      webhook: endpoint.name,
      url: endpoint.displayUrl,
      events: page.events.length,
      position: cursor,
    },
    `webhook ${endpoint.name}: ${page.events.length} event(s) delivered`,
  );
}

async function fail(
  ctx: DeliveryContext,
  endpoint: WebhookEndpoint,
  state: WebhookState,
  error: string,
  at: Date,
) {
  const attempts = state.attempts + 1;
  const nextRetryAt = new Date(at.getTime() + retryDelayMs(attempts, ctx.retryScheduleMs)).toISOString();
  await ctx.store.recordFailed(endpoint.name, { error, at: at.toISOString(), nextRetryAt });
  ctx.logger.warn(
    {
      event: 'webhook-failed',
      webhook: endpoint.name,
      url: endpoint.displayUrl,
      attempts,
      err: error,
      nextRetryAt,
    },
    `webhook ${endpoint.name} (${endpoint.displayUrl}): ${error}; attempt ${attempts}, events kept for the next try`,
  );
}

/** Runs {@link deliverWebhook} for every endpoint at once (a slow receiver does not hold up the others). */
export function deliverAll(
  ctx: DeliveryContext,
  endpoints: readonly WebhookEndpoint[],
): Promise<DeliveryRun[]> {
  return Promise.all(endpoints.map((endpoint) => deliverWebhook(ctx, endpoint)));
}

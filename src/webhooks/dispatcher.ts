import { safeMessage } from '../feed/errors.js';
import { type DeliveryContext, deliverAll, type WebhookEndpoint } from './deliver.js';

/** Delivery in the background of a following sync (`sync`, `start`). */
export interface WebhookDispatcher {
  /** Something new may be in the stream (a packet completed, a pass ended): deliver soon. */
  kick(): void;
  /** Stops retry timers and waits for the run in progress (the context's signal aborts its POST). */
  stop(): Promise<void>;
}

/**
 * Runs delivery of `endpoints` whenever kicked, one run at a time (a kick during a run starts one
 * more after it), and again at the earliest stored next retry time of a failing webhook. The first
 * run does not wait for a retry time stored by an earlier process.
 * Unexpected errors are logged; delivery goes on at the next kick.
 */
export function startWebhookDispatcher(
  ctx: DeliveryContext,
  endpoints: readonly WebhookEndpoint[],
): WebhookDispatcher {
  const now = ctx.now ?? (() => new Date());
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  const names = new Set(endpoints.map((e) => e.name));

  const scheduleRetry = async () => {
    clearTimeout(timer);
    const due = (await ctx.store.states())
      .filter((s) => names.has(s.name) && s.nextRetryAt)
      .map((s) => Date.parse(s.nextRetryAt!));
    if (due.length === 0 || ctx.signal?.aborted) return;
    // Never below 100 ms: a retry time already past is due at once.
    const delay = Math.max(100, Math.min(...due) - now().getTime());
    timer = setTimeout(kick, delay);
    timer.unref();
  };
  // The first run tries every webhook at once, whatever retry time an earlier run stored
  // (README, Webhooks: a new run delivers what earlier runs could not).
  let first = true;
  const runOnce = async () => {
    const honorNextRetry = !first;
    first = false;
    try {
      await deliverAll({ ...ctx, honorNextRetry }, endpoints);
      await ctx.idle?.();
      await scheduleRetry();
    } catch (error) {
      if (ctx.signal?.aborted) return;
      ctx.logger.error({ event: 'webhook-error', err: safeMessage(error) }, 'webhook delivery failed');
    }
  };
  const kick = () => {
    if (ctx.signal?.aborted) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await runOnce();
      } while (again && !ctx.signal?.aborted);
      running = undefined;
    })();
  };
  return {
    kick,
    stop: async () => {
      clearTimeout(timer);
      await running;
    },
  };
}

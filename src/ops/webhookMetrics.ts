import { Counter, Gauge, type Registry } from 'prom-client';
import type { Awaitable } from '../db/awaitable.js';
import type { WebhookState } from '../db/webhookQueries.js';
import { oncePerScrape } from './scrapeRead.js';

type Labels = 'webhook' | 'url';

/**
 * Registers the per-webhook metrics in `registry`, read from the `webhooks` table at each scrape
 * (so `serve` alone shows them too), labelled by webhook name and URL without credentials or query;
 * no secret. Retired webhooks are left out. Times are Unix seconds. `statesOf` reads every
 * webhook's state on either store (SQLite `webhookStates`, `Reads.webhookStates`); it is called
 * once per scrape, the metrics sharing its answer.
 */
export function registerWebhookMetrics(
  registry: Registry,
  statesOf: () => Awaitable<readonly WebhookState[]>,
): void {
  const registers = [registry];
  const labelNames = ['webhook', 'url'] as const;
  const states = oncePerScrape(statesOf);
  const each = async (metric: Gauge<Labels> | Counter<Labels>, value: (w: WebhookState) => number | null) => {
    const all = await states();
    metric.reset();
    for (const w of all) {
      const v = value(w);
      if (w.retiredAt !== null || v === null) continue;
      const labels = { webhook: w.name, url: w.url };
      if (metric instanceof Gauge) metric.set(labels, v);
      else metric.inc(labels, v);
    }
  };
  const seconds = (time: string | null) => (time === null ? null : Date.parse(time) / 1000);
  const gauge = (name: string, help: string, value: (w: WebhookState) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        return each(this, value);
      },
    });
  gauge(
    'livefeed_webhook_failed_attempts',
    'Failed delivery attempts in a row (0 after a 2xx)',
    (w) => w.attempts,
  );
  gauge('livefeed_webhook_next_retry_timestamp_seconds', 'When a failing webhook is tried again', (w) =>
    seconds(w.nextRetryAt),
  );
  gauge('livefeed_webhook_last_success_timestamp_seconds', 'When a POST was last answered 2xx', (w) =>
    seconds(w.lastSuccessAt),
  );
  gauge('livefeed_webhook_last_error_timestamp_seconds', 'When a POST last failed', (w) =>
    seconds(w.lastErrorAt),
  );
  gauge(
    'livefeed_webhook_delivered_packet',
    'Newest packet whose matching events were all acknowledged (the filters may have matched none)',
    (w) => w.deliveredPacket,
  );
  new Counter({
    name: 'livefeed_webhook_delivered_events_total',
    help: 'Events acknowledged (2xx) over the webhook’s life',
    labelNames,
    registers,
    collect() {
      return each(this, (w) => w.deliveredEvents);
    },
  });
  new Counter({
    name: 'livefeed_webhook_deliveries_total',
    help: 'POSTs by result: ok (2xx) or failed (other status, refused, timed out)',
    labelNames: [...labelNames, 'result'],
    registers,
    async collect() {
      const all = await states();
      this.reset();
      for (const w of all) {
        if (w.retiredAt !== null) continue;
        this.inc({ webhook: w.name, url: w.url, result: 'ok' }, w.deliveries);
        this.inc({ webhook: w.name, url: w.url, result: 'failed' }, w.failedDeliveries);
      }
    },
  });
}

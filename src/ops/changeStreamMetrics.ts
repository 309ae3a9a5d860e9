import { Gauge, type Registry } from 'prom-client';
import type { Awaitable } from '../db/awaitable.js';
import type { FeedHead } from '../db/feedWindow.js';
import { oncePerScrape } from './scrapeRead.js';

/**
 * Registers the change stream's metrics in `registry`, read from the database at each scrape
 * (`readHead`: `Reads.feedHead`, either store, called once per scrape and shared):
 * - `livefeed_change_stream_frontier_packet`: the newest packet the stream serves (NaN before any);
 * - `livefeed_change_stream_epoch`: the stream's epoch (db/feedRewrites.ts), up by one at each
 *   transaction that stores older packets behind its readers (`livefeed import` of an older
 *   packet, `sync --from` further back, `bootstrap`; README, "Older packets stored later"), 0
 *   before any: an increase means clients may get `HISTORY_REWRITTEN`;
 * - `livefeed_change_stream_last_rewritten_packet`: the packet of the newest such store (NaN
 *   before any).
 */
export function registerChangeStreamMetrics(
  registry: Registry,
  readHead: () => Awaitable<FeedHead> | undefined,
): void {
  const head = oncePerScrape(readHead);
  const gauge = (name: string, help: string, value: (h: FeedHead) => number | undefined) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const h = await head();
        this.set((h && value(h)) ?? Number.NaN);
      },
    });
  gauge(
    'livefeed_change_stream_frontier_packet',
    'Newest packet the change stream serves',
    (h) => h.frontier,
  );
  gauge(
    'livefeed_change_stream_epoch',
    'Epoch of the change stream: up by one at each store of older packets behind its readers',
    (h) => h.epoch,
  );
  gauge(
    'livefeed_change_stream_last_rewritten_packet',
    'Packet of the newest store behind the change stream readers',
    (h) => h.lastRewritten,
  );
}

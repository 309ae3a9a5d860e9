/**
 * Operations wiring of one `livefeed` process: the metrics registry and live events that the sync
 * and the HTTP server share (in `start` they run in one process; `serve` alone watches the database).
 * A `sync` alone has neither: nothing would read them.
 */

import type { Logger } from '../logger.js';
import type { SyncContext } from '../sync/context.js';
import { combineObservers } from '../sync/observer.js';
import type { PacketEvents } from './events.js';
import type { Metrics } from './metrics.js';
import { instrumentVerifier, recordFetched, syncMetricsObserver } from './syncMetrics.js';
import { syncProgressObserver } from './syncProgress.js';

/** What the sync and the server of one process share. */
export interface Ops {
  /** The process's metrics; none in a process that serves no /metrics (`sync`). */
  metrics?: Metrics;
  /** The `packetSynced` pubsub; none in a process that does not serve GraphQL (`sync`). */
  events?: PacketEvents;
}

/**
 * The process's operations wiring: with `events` (the process serves GraphQL), its metrics too
 * (with `livefeed_info`; prom-client loaded only then); without, neither.
 */
export async function createOps(
  info: { version: string; deployment: string; demo: boolean },
  events?: PacketEvents,
): Promise<Ops> {
  if (!events) return {};
  const metrics = (await import('./metrics.js')).createMetrics();
  metrics.setInfo(info);
  return { metrics, events };
}

/** FeedClient callbacks that count retries and fetched files; `onRetry` also logs, as the CLI did. */
export function feedClientHooks(ops: Ops, logger: Logger) {
  const { metrics } = ops;
  return {
    onRetry: (info: { url: string; attempt: number; delayMs: number; reason: string }) => {
      metrics?.retries.inc();
      logger.warn({ event: 'retry', ...info }, `retrying ${info.url} in ${info.delayMs} ms: ${info.reason}`);
    },
    onFetched: metrics && ((info: { path: string; bytes: number }) => recordFetched(metrics, info)),
  };
}

/**
 * The sync context with a progress bar for long catch-ups (plain log lines off a terminal), and,
 * in a process that has them, metrics (signature failures, quarantined lines, pass durations) and
 * `packetSynced` events.
 */
export function instrumentSync<T extends SyncContext>(ctx: T, ops: Ops, logger: Logger): T {
  const previous = ctx.observe.onPacketSynced;
  const { metrics } = ops;
  return {
    ...ctx,
    feed: {
      ...ctx.feed,
      verifier: metrics ? instrumentVerifier(ctx.feed.verifier, metrics) : ctx.feed.verifier,
    },
    observe: {
      ...ctx.observe,
      observer: combineObservers(
        ctx.observe.observer,
        metrics && syncMetricsObserver(metrics),
        syncProgressObserver({ logger }),
      ),
      onPacketSynced: (packet: number) => {
        previous?.(packet);
        metrics?.packetsSynced.inc();
        ops.events?.publish('packetSynced', packet);
      },
    },
  };
}

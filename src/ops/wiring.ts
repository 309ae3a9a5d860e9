/**
 * Operations wiring of one `livefeed` process: the metrics registry and live events that the sync
 * and the HTTP server share (in `start` they run in one process; `serve` alone watches the database).
 */

import type { Logger } from '../logger.js';
import type { SyncContext } from '../sync/context.js';
import { combineObservers } from '../sync/observer.js';
import type { PacketEvents } from './events.js';
import {
  createMetrics,
  instrumentVerifier,
  type Metrics,
  recordFetched,
  syncMetricsObserver,
} from './metrics.js';
import { syncProgressObserver } from './syncProgress.js';

/** What the sync and the server of one process share. */
export interface Ops {
  metrics: Metrics;
  /** The `packetSynced` pubsub; none in a process that does not serve GraphQL (`sync`). */
  events?: PacketEvents;
}

/** Creates the process's metrics (with `livefeed_info`), with `events` when the process serves GraphQL. */
export function createOps(
  info: { version: string; deployment: string; demo: boolean },
  events?: PacketEvents,
): Ops {
  const metrics = createMetrics();
  metrics.setInfo(info);
  return { metrics, events };
}

/** FeedClient callbacks that count retries and fetched files; `onRetry` also logs, as the CLI did. */
export function feedClientHooks(ops: Ops, logger: Logger) {
  return {
    onRetry: (info: { url: string; attempt: number; delayMs: number; reason: string }) => {
      ops.metrics.retries.inc();
      logger.warn({ event: 'retry', ...info }, `retrying ${info.url} in ${info.delayMs} ms: ${info.reason}`);
    },
    onFetched: (info: { path: string; bytes: number }) => recordFetched(ops.metrics, info),
  };
}

/**
 * The sync context with metrics (signature failures, quarantined lines, pass durations), a
 * progress bar for long catch-ups (plain log lines off a terminal) and `packetSynced` events.
 */
export function instrumentSync<T extends SyncContext>(ctx: T, ops: Ops, logger: Logger): T {
  const previous = ctx.observe.onPacketSynced;
  return {
    ...ctx,
    feed: { ...ctx.feed, verifier: instrumentVerifier(ctx.feed.verifier, ops.metrics) },
    observe: {
      ...ctx.observe,
      observer: combineObservers(
        ctx.observe.observer,
        syncMetricsObserver(ops.metrics),
        syncProgressObserver({ logger }),
      ),
      onPacketSynced: (packet: number) => {
        previous?.(packet);
        ops.metrics.packetsSynced.inc();
        ops.events?.publish('packetSynced', packet);
      },
    },
  };
}

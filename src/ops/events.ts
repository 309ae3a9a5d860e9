/**
 * Live events of one process: "packet N became complete", for the GraphQL subscription
 * `packetSynced`. In `livefeed start` the sync publishes directly (SyncContext.observe.onPacketSynced); a
 * `livefeed serve` without a sync in the process watches the database with {@link watchCompletedPackets}.
 */
import { createPubSub, type PubSub } from 'graphql-yoga';
import type { Store } from '../db/client.js';
import { NO_SYNCED_MARK, SYNCED_PACKETS_SQL, type SyncedMark } from '../db/syncedPackets.js';

/** The process's pubsub: topic `packetSynced` carries a packet number. */
export type PacketEvents = PubSub<{ packetSynced: [packet: number] }>;

/** A new, in-process pubsub (graphql-yoga `createPubSub`). */
export function createPacketEvents(): PacketEvents {
  return createPubSub<{ packetSynced: [packet: number] }>();
}

/** Options of {@link watchCompletedPackets}. */
export interface WatchOptions {
  /** Milliseconds between checks. Default 2000. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Told when a check fails (the watch goes on). */
  onError?: (error: unknown) => void;
}

/**
 * Publishes `packetSynced` for each packet that another process (the sync) completes in `store`,
 * checking every `intervalMs`; packets complete before the call are not announced. A check reads
 * SQLite's `data_version` first and queries only when another connection committed since.
 * PostgreSQL's twin is db/postgres/listen.ts watchPostgresPackets (LISTEN, no polling).
 * @returns a function that stops the watch (also stopped by `signal`).
 */
export function watchCompletedPackets(
  store: Store,
  events: PacketEvents,
  options: WatchOptions = {},
): () => void {
  const dataVersion = store.sqlite.prepare('PRAGMA data_version').pluck();
  const newest = store.sqlite.prepare(SYNCED_PACKETS_SQL.newest);
  const after = store.sqlite.prepare(SYNCED_PACKETS_SQL.after);
  let mark: SyncedMark = (newest.get() as SyncedMark | undefined) ?? NO_SYNCED_MARK;
  let version = dataVersion.get();
  const check = () => {
    try {
      const current = dataVersion.get();
      if (current === version) return;
      version = current;
      for (const row of after.all(mark.syncedAt, mark.number) as SyncedMark[]) {
        mark = row;
        events.publish('packetSynced', row.number);
      }
    } catch (error) {
      options.onError?.(error);
    }
  };
  const timer = setInterval(check, options.intervalMs ?? 2000);
  timer.unref();
  const stop = () => clearInterval(timer);
  options.signal?.addEventListener('abort', stop, { once: true });
  return stop;
}

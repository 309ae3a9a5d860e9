import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { NO_SYNCED_MARK, SYNCED_PACKETS_SQL, type SyncedMark } from '../syncedPackets.js';
import { PG_TYPES, type PostgresConnection } from './client.js';
import { PACKETS_CHANNEL } from './notify.js';
import { pgSql } from './sql.js';

/**
 * Milliseconds before the 1st, 2nd, ... attempt to connect again after the listening connection
 * was lost (or could not be made); past the end, the last. A successful LISTEN starts over.
 */
export const RECONNECT_DELAYS_MS: readonly number[] = [100, 500, 1_000, 2_000, 5_000];

/** Options of {@link watchPostgresPackets}. */
export interface PostgresWatchOptions {
  /** Stops the watch (as {@link PostgresWatch.stop}). */
  signal?: AbortSignal;
  /**
   * Told when the listening connection breaks or cannot be made, or a read fails; the watch goes
   * on (it connects again after {@link reconnectDelaysMs}). The error names no password.
   */
  onError?: (error: unknown) => void;
  /**
   * Told each time the watch listens (again): `missed` is how many packets completed while it did
   * not (after a lost connection), announced now; 0 at the first start.
   */
  onListening?: (info: { missed: number }) => void;
  /** Default {@link RECONNECT_DELAYS_MS}. */
  reconnectDelaysMs?: readonly number[];
}

/** A running {@link watchPostgresPackets}. */
export interface PostgresWatch {
  /** Resolves once the watch listens for the first time (it keeps trying until then). */
  listening: Promise<void>;
  /** Ends the watch and its connection; resolves once both are done. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Where the watch announces a completed packet: the process's `PacketEvents` (ops/events.ts),
 * named by its shape so that db/ does not import ops/.
 */
export interface PacketPublisher {
  publish(topic: 'packetSynced', packet: number): void;
}

/**
 * Publishes `packetSynced` in `events` for each packet the sync completes in the PostgreSQL
 * database of `connection` (docs/POSTGRES_PORT.md, step 6; the twin of ops/events.ts
 * watchCompletedPackets, without polling): `LISTEN livefeed_packets` on a connection of its own
 * (not a pooled one: a pool hands its connections to other work and a LISTEN ends with its
 * session). The sync notifies inside the transaction that completes a packet (db/postgres/notify.ts),
 * so the notification arrives at COMMIT. A notification wakes a read of the packets completed after
 * the last one announced (db/syncedPackets.ts), so packets are announced once each, in completion
 * order. A lost connection is opened again with back-off ({@link RECONNECT_DELAYS_MS}); the packets
 * completed meanwhile (their notifications are lost) are read and announced once it listens again.
 * Packets complete before the start are not announced.
 * @returns the running watch; errors go to `onError`, never thrown.
 */
export function watchPostgresPackets(
  connection: PostgresConnection,
  events: PacketPublisher,
  options: PostgresWatchOptions = {},
): PostgresWatch {
  const delays = options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
  const report = (error: unknown) => options.onError?.(error);
  const stopping = new AbortController();
  let mark: SyncedMark | undefined;
  let client: pg.Client | undefined;
  let reading: Promise<unknown> = Promise.resolve();
  let heard!: () => void;
  const listening = new Promise<void>((resolve) => {
    heard = resolve;
  });

  /** Announces the packets completed after the mark, in order; how many. */
  const announce = async (on: pg.Client): Promise<number> => {
    const { rows } = await on.query<SyncedMark>(pgSql(SYNCED_PACKETS_SQL.after), [
      mark!.syncedAt,
      mark!.number,
    ]);
    for (const row of rows) {
      mark = row;
      events.publish('packetSynced', row.number);
    }
    return rows.length;
  };
  // One read at a time, in the order of the wake-ups: a packet is never announced twice.
  const serially = <T>(read: () => Promise<T>): Promise<T> => {
    const next = reading.then(read);
    reading = next.catch(() => {});
    return next;
  };

  /** Connects and listens; resolves with the reason once the connection is gone. */
  const session = async (): Promise<{ gone: Promise<Error> }> => {
    const on = new pg.Client({
      connectionString: connection.connectionString,
      application_name: 'livefeed listen',
      types: PG_TYPES,
      keepAlive: true,
      connectionTimeoutMillis: 30_000,
    });
    client = on;
    const gone = new Promise<Error>((resolve) => {
      on.on('error', resolve);
      on.on('end', () => resolve(new Error(`the connection listening to ${connection.display} ended`)));
    });
    on.on('notification', () => void serially(() => announce(on)).catch(report));
    await on.connect();
    // The start read before LISTEN, the catch-up after it: a packet completing in between is read.
    const first = mark === undefined;
    if (first) mark = (await on.query<SyncedMark>(SYNCED_PACKETS_SQL.newest)).rows[0] ?? NO_SYNCED_MARK;
    await on.query(`LISTEN ${PACKETS_CHANNEL}`);
    const missed = await serially(() => announce(on));
    options.onListening?.({ missed: first ? 0 : missed });
    heard();
    // Wrapped: an async function would wait for a promise it returns.
    return { gone };
  };

  const run = async () => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        const { gone } = await session();
        failures = 0;
        const reason = await gone;
        if (!stopping.signal.aborted) report(reason);
      } catch (error) {
        if (!stopping.signal.aborted) report(error);
      }
      await client?.end().catch(() => {});
      if (stopping.signal.aborted) return;
      const delay = delays[Math.min(failures++, delays.length - 1)]!;
      await sleep(delay, undefined, { signal: stopping.signal }).catch(() => {});
    }
  };
  const running = run();
  const stop = async () => {
    stopping.abort();
    await client?.end().catch(() => {});
    await running;
  };
  options.signal?.addEventListener('abort', () => void stop(), { once: true });
  if (options.signal?.aborted) void stop();
  return { listening, stop };
}

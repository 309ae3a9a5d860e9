import type { EntityType } from '../feed/entities.js';

/** How a sync pass ended: `ok`, `problems` (some files failed and were recorded), or `error` (thrown). */
export type PassOutcome = 'ok' | 'problems' | 'error';

/**
 * Told about a sync's progress, for metrics and progress bars. Every member is optional and must
 * not throw; it runs inline in the sync, so it must be quick.
 */
export interface SyncObserver {
  /** A pass read `replication-info` and chose packets `from`..`to` (inclusive). */
  passStarted?(info: { latest: number; from: number; to: number }): void;
  /** The pass finished every file of `packet` (stored, pending or failed). */
  packetVisited?(packet: number): void;
  /** A JSON dump was stored: its line counts and archive size in bytes. */
  dumpStored?(info: {
    packet: number;
    entity: EntityType;
    changes: number;
    quarantined: number;
    bytes: number;
  }): void;
  /** A pass ended; `seconds` is its wall-clock duration. */
  passFinished?(info: { seconds: number; outcome: PassOutcome }): void;
}

/** One observer that tells each of `observers` in turn. */
export function combineObservers(...observers: (SyncObserver | undefined)[]): SyncObserver {
  const list = observers.filter((o): o is SyncObserver => o !== undefined);
  return {
    passStarted: (info) => {
      for (const o of list) o.passStarted?.(info);
    },
    packetVisited: (packet) => {
      for (const o of list) o.packetVisited?.(packet);
    },
    dumpStored: (info) => {
      for (const o of list) o.dumpStored?.(info);
    },
    passFinished: (info) => {
      for (const o of list) o.passFinished?.(info);
    },
  };
}

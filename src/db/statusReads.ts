import type { EntityType } from '../feed/entities.js';
import type { Awaitable } from './awaitable.js';
import type { Store } from './client.js';
import { type LockHolder, lockHolder } from './lock.js';
import {
  anyPacketSynced,
  type MigrationState,
  migrationState,
  type PacketPosition,
  packetPosition,
  packetTime,
  readUpstream,
  tableExists,
  type UnfinishedFile,
  type UpstreamRecord,
  unfinishedFiles,
  type WaitingForDumps,
  waitingForDumps,
} from './status.js';
import { STATUS_SQL } from './statusQueries.js';

/** The JSON dumps with changes of the newest packet that has any (GraphiQL's example). */
export interface NewestDumps {
  packet: number;
  /** Entity types with changes in it, in code point order. */
  entities: EntityType[];
}

/**
 * The reads of the HTTP routes beside GraphQL (`/ready`, `/freshness`, `/metrics`, GraphiQL's
 * example) and of `livefeed status` (issue 17, docs/POSTGRES_PORT.md step 8), part of `Reads`
 * (db/reads.ts): {@link sqliteStatusReads} answers at once from db/status.ts, `postgresStatusReads`
 * (db/postgres/statusReads.ts) with promises; the statements are written once (db/statusQueries.ts).
 * Both give the same answers over the same rows (times as stored ISO 8601 text, counts as numbers).
 * Every method throws (SQLite) or rejects (PostgreSQL) with the store's error.
 */
export interface StatusReads {
  /** Answers when the database does; throws or rejects with its error otherwise (`/ready`). */
  ping(): Awaitable<void>;
  /** Which of this build's migrations are applied (the migrator's own bookkeeping). */
  migrationState(): Awaitable<MigrationState>;
  /** True when at least one packet is complete. */
  anyPacketSynced(): Awaitable<boolean>;
  /** The time of `packet` (its TIMESTAMP, or an hourly estimate: db/status.ts `packetTime`), or null. */
  packetTime(packet: number): Awaitable<Date | null>;
  /** The upstream position a sync last recorded, or undefined. */
  upstream(): Awaitable<UpstreamRecord | undefined>;
  /** True when a sync of the bundled sample feed marked the database as the demo's. */
  demo(): Awaitable<boolean>;
  /** Packets waiting for JSON dumps (and why, when livefeed knows), or undefined. */
  waitingForDumps(): Awaitable<WaitingForDumps | undefined>;
  /** Packet counts: highest, first incomplete, stored and complete. */
  packetPosition(): Awaitable<PacketPosition>;
  /** Counts of unfinished files and the first `limit` of them (failed first, then by packet). */
  unfinishedFiles(limit: number): Awaitable<{ pending: number; failed: number; files: UnfinishedFile[] }>;
  /** Who holds the writer lock now, or undefined when no sync writes. */
  lockHolder(): Awaitable<LockHolder | undefined>;
  /** See {@link NewestDumps}; undefined when no JSON dump with changes is stored. */
  newestDumpsWithChanges(): Awaitable<NewestDumps | undefined>;
}

/** {@link NewestDumps} of the rows of `STATUS_SQL.newestDumpsWithChanges`. */
export function newestDumpsOf(rows: readonly { packet: number; entity: string }[]): NewestDumps | undefined {
  if (rows.length === 0) return undefined;
  const entities = rows.map((r) => r.entity as EntityType).sort();
  return { packet: rows[0]!.packet, entities };
}

/** {@link StatusReads} over a SQLite store: each answer at once, an error thrown. */
export function sqliteStatusReads(store: Store): StatusReads {
  return {
    ping: () => {
      store.sqlite.prepare('SELECT 1').get();
    },
    migrationState: () => migrationState(store),
    anyPacketSynced: () => anyPacketSynced(store),
    packetTime: (packet) => packetTime(store, packet),
    upstream: () => readUpstream(store),
    demo: () =>
      (store.sqlite.prepare(STATUS_SQL.demo).get() as { value: string } | undefined)?.value === 'true',
    waitingForDumps: () => waitingForDumps(store),
    packetPosition: () => packetPosition(store),
    unfinishedFiles: (limit) => unfinishedFiles(store, limit),
    // A database an older livefeed made may have no lock table yet.
    lockHolder: () => (tableExists(store, 'sync_lock') ? lockHolder(store) : undefined),
    newestDumpsWithChanges: () =>
      newestDumpsOf(
        store.sqlite.prepare(STATUS_SQL.newestDumpsWithChanges).all() as { packet: number; entity: string }[],
      ),
  };
}

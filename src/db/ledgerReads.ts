import type { Awaitable } from './awaitable.js';
import { type BootstrapState, bootstrapState } from './bootstrapQueries.js';
import type { Store } from './client.js';
import { latestPacket } from './latestPacket.js';
import {
  type FailureRow,
  failureCount,
  failuresPage,
  type QuarantineFilter,
  type QuarantineKey,
  type QuarantineRow,
  quarantineCount,
  quarantinePage,
} from './operatorQueries.js';
import {
  type DumpRow,
  dumpsOfPacket,
  type FeedFileRow,
  feedFileByName,
  type PacketRow,
  packetByNumber,
  packetCount,
  packetsPage,
} from './queries.js';
import { type WebhookState, webhookStates } from './webhookQueries.js';

/**
 * The reads of the sync's ledger that the GraphQL layer needs (packets, JSON dumps, feed files,
 * failures, quarantine, bootstrap, webhooks; issue 17, docs/POSTGRES_PORT.md step 4), part of
 * `Reads` (db/reads.ts): {@link sqliteLedgerReads} answers at once from the synchronous functions
 * of db/*Queries.ts, `postgresLedgerReads` (db/postgres/ledgerReads.ts) with promises. Both give
 * the same answers over the same rows: times as the stored ISO 8601 text, integers as numbers,
 * quarantined lines as the text SQLite holds. Every method throws (SQLite) or rejects (PostgreSQL)
 * with the store's error, and with a RangeError for a bad page limit.
 */
export interface LedgerReads {
  /**
   * The newest complete packet with every packet from the first one stored up to it also
   * complete (db/latestPacket.ts), or undefined when there is none.
   */
  latestPacket(): Awaitable<PacketRow | undefined>;
  /** The packet `number`, or undefined when it is not stored. */
  packetByNumber(number: number): Awaitable<PacketRow | undefined>;
  /** Up to `limit` packets below `before` (undefined: from the newest), newest first. */
  packetsPage(before: number | undefined, limit: number): Awaitable<PacketRow[]>;
  /** Number of packets stored. */
  packetCount(): Awaitable<number>;
  /** The stored `dumps` rows of `packet` (entity types never tried have none), in no order. */
  dumpsOfPacket(packet: number): Awaitable<DumpRow[]>;
  /** The feed file named `name` (path under the feed root), or undefined. */
  feedFileByName(name: string): Awaitable<FeedFileRow | undefined>;
  /**
   * Up to `limit` failed files after (`packet`, entity type or '' for the replication packet),
   * by packet, the replication packet first (db/operatorQueries.ts).
   */
  failuresPage(after: { packet: number; entity: string } | undefined, limit: number): Awaitable<FailureRow[]>;
  /** Number of FAILED JSON dumps and FAILED, PENDING or MISSING replication packets. */
  failureCount(): Awaitable<number>;
  /** Up to `limit` quarantined lines matching `filter` after `after`, by packet, entity type, line. */
  quarantinePage(
    filter: QuarantineFilter,
    after: QuarantineKey | undefined,
    limit: number,
  ): Awaitable<QuarantineRow[]>;
  /** Number of quarantined lines matching `filter`. */
  quarantineCount(filter: QuarantineFilter): Awaitable<number>;
  /** The position of the last finished `livefeed bootstrap` and its imports, read together. */
  bootstrapState(): Awaitable<BootstrapState>;
  /** Every webhook's delivery state, by name (code point order); never a secret. */
  webhookStates(): Awaitable<WebhookState[]>;
}

/** {@link LedgerReads} over a SQLite store: each answer at once, an error thrown. */
export function sqliteLedgerReads(store: Store): LedgerReads {
  return {
    latestPacket: () => latestPacket(store),
    packetByNumber: (number) => packetByNumber(store, number),
    packetsPage: (before, limit) => packetsPage(store, before, limit),
    packetCount: () => packetCount(store),
    dumpsOfPacket: (packet) => dumpsOfPacket(store, packet),
    feedFileByName: (name) => feedFileByName(store, name),
    failuresPage: (after, limit) => failuresPage(store, after, limit),
    failureCount: () => failureCount(store),
    quarantinePage: (filter, after, limit) => quarantinePage(store, filter, after, limit),
    quarantineCount: (filter) => quarantineCount(store, filter),
    bootstrapState: () => bootstrapState(store),
    webhookStates: () => webhookStates(store),
  };
}

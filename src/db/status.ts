/**
 * Read-mostly queries about the sync's position and health, for `/ready`, `/freshness`, `/metrics`
 * and `livefeed status`. Times are ISO 8601 text as stored; packet numbers are replication sequences.
 */
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { MIGRATIONS_FOLDER, type Store } from './client.js';
import { LATEST_PACKET_SQL, latestPacket } from './latestPacket.js';
import { quarantineCount } from './operatorQueries.js';
import type { PacketRow } from './queries.js';
import { limitClause } from './statements.js';
import { STATUS_SQL } from './statusQueries.js';

/** Packets are hourly (FEED.md, Deployments and URLs). */
export const PACKET_INTERVAL_MS = 3_600_000;

/** The upstream latest packet as last read from `replication-info` by a sync, and when. */
export interface UpstreamRecord {
  /** Null when the feed had no packets. */
  latest: number | null;
  /** ISO 8601. */
  checkedAt: string;
}

/** (key, value): sets a meta value (written once for SQLite and PostgreSQL). */
export const PUT_META = LATEST_PACKET_SQL.putMeta;

/** Records what `replication-info` said (meta keys `upstream_latest`, `upstream_checked_at`). */
export function recordUpstream(store: Store, latest: number | null, at: string): void {
  const put = store.sqlite.prepare(PUT_META);
  store.sqlite.transaction(() => {
    for (const [key, value] of upstreamMeta(latest, at)) put.run(key, value);
  })();
}

/** Marks the database as the demo's (meta key `demo`: data of the bundled sample feed). */
export function markDemo(store: Store): void {
  store.sqlite.prepare(PUT_META).run('demo', 'true');
}

/** The last recorded upstream position, or undefined when no sync has read it into this database. */
export function readUpstream(store: Store): UpstreamRecord | undefined {
  return upstreamOf(store.sqlite.prepare(STATUS_SQL.upstream).all() as MetaRow[]);
}

/** A `meta` row. */
export interface MetaRow {
  key: string;
  value: string;
}

/** The {@link UpstreamRecord} of the rows of `STATUS_SQL.upstream`, or undefined without one. */
export function upstreamOf(rows: readonly MetaRow[]): UpstreamRecord | undefined {
  const map = new Map(rows.map((r) => [r.key, r.value]));
  const checkedAt = map.get('upstream_checked_at');
  if (checkedAt === undefined) return undefined;
  const latest = map.get('upstream_latest');
  return { latest: latest ? Number(latest) : null, checkedAt };
}

/** Where the local copy stands. */
export interface LocalPosition {
  /** Newest complete packet with no gap before it ({@link latestPacket}). */
  latest: PacketRow | undefined;
  /** Highest packet number known (complete or not), null on an empty database. */
  highest: number | null;
  /** Lowest packet not yet complete, null when none. */
  firstIncomplete: number | null;
  /** Packets stored, and how many of them are complete. */
  packets: number;
  completed: number;
}

/** The packet counts of {@link LocalPosition}. */
export type PacketPosition = Omit<LocalPosition, 'latest'>;

/**
 * The packet counts of {@link LocalPosition}, written once for SQLite and PostgreSQL, without
 * stepping through every packet (issue 16, a year of operation): the highest is the primary key's
 * last entry; the incomplete packets are the `NULL` end of `packets_synced_at` (few), read by two
 * subqueries, which measured faster than one whose two values SQLite materializes; and SQLite
 * counts a whole table from its pages without reading its rows (`completed` is that count less the
 * incomplete). One aggregate over every row took 8 µs for 24 packets and 1,038 µs for the 8,760 of
 * a year; this takes 6 µs for both (bench/RESULTS.md).
 */
export const PACKET_POSITION_SQL = `SELECT (SELECT max(number) FROM packets) AS highest,
    (SELECT min(number) FROM packets WHERE synced_at IS NULL) AS "firstIncomplete",
    t.n AS packets, t.n - (SELECT count(*) FROM packets WHERE synced_at IS NULL) AS completed
  FROM (SELECT count(*) AS n FROM packets) t`;

/** Keys and values of what `replication-info` said, for {@link recordUpstream} (`at`: ISO 8601). */
export function upstreamMeta(latest: number | null, at: string): [string, string][] {
  return [
    ['upstream_latest', latest === null ? '' : String(latest)],
    ['upstream_checked_at', at],
  ];
}

/** The packet counts of {@link LocalPosition}: what the sync starts its next pass from. */
export function packetPosition(store: Store): PacketPosition {
  return store.sqlite.prepare(PACKET_POSITION_SQL).get() as Omit<LocalPosition, 'latest'>;
}

/** The local position (see {@link LocalPosition}). */
export function localPosition(store: Store): LocalPosition {
  return { latest: latestPacket(store), ...packetPosition(store) };
}

/** True when at least one packet is complete. */
export function anyPacketSynced(store: Store): boolean {
  return store.sqlite.prepare(STATUS_SQL.anyPacketSynced).get() !== undefined;
}

/**
 * The time of `packet`: its TIMESTAMP, or, when none of its archives was read (no changes that
 * hour), the nearest earlier packet's TIMESTAMP plus one hour per packet. Null when unknown.
 */
export function packetTime(store: Store, packet: number): Date | null {
  return packetTimeOf(
    store.sqlite.prepare(STATUS_SQL.packetTime).get(packet) as TimedPacket | undefined,
    packet,
  );
}

/** A packet and its TIMESTAMP (ISO 8601), as `STATUS_SQL.packetTime` reads it. */
export interface TimedPacket {
  number: number;
  timestamp: string | null;
}

/** The time of `packet` from the row of `STATUS_SQL.packetTime` (see {@link packetTime}). */
export function packetTimeOf(row: TimedPacket | undefined, packet: number): Date | null {
  if (!row?.timestamp) return null;
  const at = Date.parse(row.timestamp);
  return Number.isNaN(at) ? null : new Date(at + (packet - row.number) * PACKET_INTERVAL_MS);
}

/**
 * A file the sync has not finished: a JSON dump or a replication packet, PENDING or FAILED, or a
 * MISSING replication packet (still asked for; counted with the failed ones).
 */
export interface UnfinishedFile {
  packet: number;
  /** `json-dump <entity>` or `replication packet`. */
  file: string;
  status: 'PENDING' | 'FAILED' | 'MISSING';
  error: string | null;
  /** Failed attempts; a replication packet's 404s count too (a JSON dump's do not). */
  attempts: number;
  /** 1 once upstream answered 404 for it (not published yet, or missing), else 0. */
  asked: number;
}

/** Counts of unfinished files and the first `limit` of them (failed first, then by packet). */
export function unfinishedFiles(
  store: Store,
  limit: number,
): { pending: number; failed: number; files: UnfinishedFile[] } {
  const counts = store.sqlite.prepare(STATUS_SQL.unfinishedCounts).get() as UnfinishedCounts;
  const files = store.sqlite
    .prepare(`${STATUS_SQL.unfinishedFiles} ${limitClause(limit)}`)
    .all() as UnfinishedFile[];
  return { ...counts, files };
}

/** How many files are unfinished, by status (MISSING counted with FAILED). */
export interface UnfinishedCounts {
  pending: number;
  failed: number;
}

/**
 * Packets waiting for JSON dumps: packets holding a PENDING dump, how many, the oldest and its
 * TIMESTAMP (ISO, null when unknown), when its first 404 was seen, and why they wait when it is not
 * that upstream has not published them yet. Shown by `/freshness` and `livefeed status` so that a
 * halted upstream dump job, or an hour upstream no longer holds, is visible.
 */
export interface WaitingForDumps {
  packets: number;
  oldest: number;
  oldestTimestamp: string | null;
  /** Earliest `checked_at` among the PENDING dumps of the oldest packet (ISO). */
  since: string | null;
  /**
   * The reason stored with the oldest PENDING dump that has one: its hour may be gone upstream, or
   * that could not be asked (sync/hourHeld.ts; it names its packet). Null: upstream has not
   * published the dumps yet.
   */
  reason: string | null;
}

/** See {@link WaitingForDumps}; undefined when no dump is PENDING. */
export function waitingForDumps(store: Store): WaitingForDumps | undefined {
  return waitingOf(store.sqlite.prepare(STATUS_SQL.waitingForDumps).get() as WaitingRow);
}

/** The row of `STATUS_SQL.waitingForDumps`. */
export type WaitingRow = Omit<WaitingForDumps, 'oldest'> & { oldest: number | null };

/** The {@link WaitingForDumps} of its row, undefined when no dump is PENDING. */
export function waitingOf(row: WaitingRow | undefined): WaitingForDumps | undefined {
  if (!row?.packets || row.oldest === null) return undefined;
  const { packets, oldest, oldestTimestamp, since, reason } = row;
  return { packets, oldest, oldestTimestamp, since, reason };
}

/** Lines kept in quarantine (not stored as changes) across all packets. */
export function quarantinedLineCount(store: Store): number {
  return quarantineCount(store, {});
}

/** True when the database has a table named `name` (one an older livefeed did not create, say). */
export function tableExists(store: Store, name: string): boolean {
  return (
    store.sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !==
    undefined
  );
}

/** Which drizzle migrations are applied, by the migrator's own bookkeeping (`__drizzle_migrations`). */
export interface MigrationState {
  expected: number;
  /** Migrations in `drizzle/sqlite/` not applied to this database. */
  pending: number;
}

/** Compares `drizzle/sqlite/` with the database's migration table. */
export function migrationState(store: Store): MigrationState {
  const last = tableExists(store, '__drizzle_migrations')
    ? (store.sqlite.prepare(STATUS_SQL.lastMigration).get() as { at: number | null }).at
    : null;
  return pendingMigrations(MIGRATIONS_FOLDER, last);
}

/**
 * The {@link MigrationState} of the migrations in `folder` against `last`, the `created_at` (the
 * migration's folder time, ms) of the newest one applied, null when none is.
 */
export function pendingMigrations(folder: string, last: number | null): MigrationState {
  const files = readMigrationFiles({ migrationsFolder: folder });
  const pending = files.filter((m) => last === null || m.folderMillis > Number(last)).length;
  return { expected: files.length, pending };
}

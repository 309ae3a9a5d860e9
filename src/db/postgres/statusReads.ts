import type { LockHolder } from '../lock.js';
import {
  type MetaRow,
  PACKET_POSITION_SQL,
  type PacketPosition,
  packetTimeOf,
  pendingMigrations,
  type TimedPacket,
  type UnfinishedCounts,
  type UnfinishedFile,
  upstreamOf,
  type WaitingRow,
  waitingOf,
} from '../status.js';
import { STATUS_SQL } from '../statusQueries.js';
import { newestDumpsOf, type StatusReads } from '../statusReads.js';
import {
  LAST_MIGRATION_SQL,
  MIGRATIONS_TABLE_SQL,
  POSTGRES_MIGRATIONS_FOLDER,
  type PostgresStore,
} from './client.js';
import { pgSql } from './sql.js';
import { WRITER_LOCK_PARTS, writerLockHeldSql } from './writerSession.js';

/** A named statement of the shared `text` (`?` parameters), prepared once per pooled connection. */
const named = (name: string, text: string) => ({ name: `livefeed_status_${name}`, text: pgSql(text) });

const ANY_PACKET_SYNCED = named('any_packet_synced', STATUS_SQL.anyPacketSynced);
const PACKET_TIME = named('packet_time', STATUS_SQL.packetTime);
const UPSTREAM = named('upstream', STATUS_SQL.upstream);
const DEMO = named('demo', STATUS_SQL.demo);
const WAITING = named('waiting', STATUS_SQL.waitingForDumps);
const POSITION = named('position', PACKET_POSITION_SQL);
const UNFINISHED_COUNTS = named('unfinished_counts', STATUS_SQL.unfinishedCounts);
const UNFINISHED_FILES = named('unfinished_files', `${STATUS_SQL.unfinishedFiles} LIMIT ?`);
const NEWEST_DUMPS = named('newest_dumps', STATUS_SQL.newestDumpsWithChanges);

/**
 * drizzle's PostgreSQL migrator keeps its bookkeeping in `drizzle.__drizzle_migrations` (SQLite's
 * in `__drizzle_migrations`); `created_at` is the migration's folder time in ms, as on SQLite.
 * PostgreSQL only (the schema-qualified table).
 */

/**
 * The holder row only while its session holds the advisory writer lock (sync/postgres/lock.ts):
 * a writer killed with `kill -9` leaves its row, but PostgreSQL released its lock. A bigint
 * advisory lock shows in `pg_locks` as its high and low 32 bits (`classid`, `objid`, `objsubid` 1).
 * PostgreSQL only (`pg_locks`).
 */
const LOCK_HOLDER = {
  name: 'livefeed_status_lock_holder',
  text: `SELECT pid, host, acquired_at AS "acquiredAt", heartbeat_at AS "heartbeatAt" FROM sync_lock
    WHERE id = 1 AND EXISTS (SELECT 1 FROM pg_locks WHERE ${writerLockHeldSql(1)})`,
  values: [...WRITER_LOCK_PARTS],
};

/** The page limit as a parameter: a safe non-negative integer, as SQLite's `limitClause` checks. */
function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`page limit ${limit}`);
  return limit;
}

/**
 * {@link StatusReads} over a PostgreSQL store (issue 17, docs/POSTGRES_PORT.md step 8): the same
 * answers as `sqliteStatusReads` over the same rows; one statement per read on a pooled connection
 * (`migrationState` and `unfinishedFiles` two).
 */
export function postgresStatusReads(store: PostgresStore): StatusReads {
  const rows = async <T>(statement: { name: string; text: string }, values: unknown[] = []) =>
    (await store.pool.query({ ...statement, values })).rows as T[];
  return {
    ping: async () => {
      await store.pool.query('SELECT 1');
    },
    migrationState: async () => {
      const { rows: present } = await store.pool.query<{ present: boolean }>(MIGRATIONS_TABLE_SQL);
      const last = present[0]?.present
        ? ((await store.pool.query<{ at: number | null }>(LAST_MIGRATION_SQL)).rows[0]?.at ?? null)
        : null;
      return pendingMigrations(POSTGRES_MIGRATIONS_FOLDER, last);
    },
    anyPacketSynced: async () => (await rows(ANY_PACKET_SYNCED)).length > 0,
    packetTime: async (packet) => packetTimeOf((await rows<TimedPacket>(PACKET_TIME, [packet]))[0], packet),
    upstream: async () => upstreamOf(await rows<MetaRow>(UPSTREAM)),
    demo: async () => (await rows<{ value: string }>(DEMO))[0]?.value === 'true',
    waitingForDumps: async () => waitingOf((await rows<WaitingRow>(WAITING))[0]),
    packetPosition: async () => (await rows<PacketPosition>(POSITION))[0]!,
    unfinishedFiles: async (limit) => {
      const [counts, files] = await Promise.all([
        rows<UnfinishedCounts>(UNFINISHED_COUNTS),
        rows<UnfinishedFile>(UNFINISHED_FILES, [checkedLimit(limit)]),
      ]);
      return { ...counts[0]!, files };
    },
    lockHolder: async () => (await store.pool.query<LockHolder>(LOCK_HOLDER)).rows[0],
    newestDumpsWithChanges: async () =>
      newestDumpsOf(await rows<{ packet: number; entity: string }>(NEWEST_DUMPS)),
  };
}

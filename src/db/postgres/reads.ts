import { JSON_DUMP_STATE_SQL, type JsonDumpState } from '../dumpState.js';
import { OLDEST_PACKET_SQL, PRUNED_BEFORE_SQL } from '../historyQueries.js';
import type { Reads, SnapshotReads } from '../reads.js';
import { changesOfMbidPagePostgres, changesPagePostgres, previousChangePostgres } from './changeReads.js';
import type { PostgresStore } from './client.js';
import { currentOfMbidsPostgres } from './currentReads.js';
import { postgresFeedReads } from './feedReads.js';
import { postgresLedgerReads } from './ledgerReads.js';
import { named, removalCountPostgres, removalOfMbidPostgres, removalsPagePostgres } from './removalReads.js';
import { searchCountPostgres, searchHitsPostgres } from './searchReads.js';
import { BEGIN_SNAPSHOT, inPgTransaction, type PgQueryable } from './sql.js';
import { postgresStatusReads } from './statusReads.js';

// Named statements: prepared once per pooled connection, as SQLite's cachedStatement does.
const CHANGE_COUNT_OF_MBID = {
  name: 'livefeed_change_count_of_mbid',
  text: 'SELECT count(*) FROM changes WHERE mbid = $1',
  rowMode: 'array' as const,
};
const PRUNED_BEFORE = {
  name: 'livefeed_pruned_before',
  text: "SELECT value FROM meta WHERE key = 'history_from'",
  rowMode: 'array' as const,
};
// Both facts of historyFrom in one statement: one snapshot, one server when reads go to replicas.
const HISTORY_FROM = {
  name: 'livefeed_history_from',
  text: `SELECT (${PRUNED_BEFORE_SQL}), (${OLDEST_PACKET_SQL})`,
  rowMode: 'array' as const,
};
const PACKET_TIMESTAMP = {
  name: 'livefeed_packet_timestamp',
  text: 'SELECT timestamp FROM packets WHERE number = $1',
  rowMode: 'array' as const,
};

const JSON_DUMP_STATE = named('livefeed_json_dump_state', JSON_DUMP_STATE_SQL);

/** The current state reads on `on`: the pool, or a snapshot's connection. */
function currentReads(on: PgQueryable): SnapshotReads {
  return {
    currentOfMbid: async (mbid) => (await currentOfMbidsPostgres(on, [mbid]))[0],
    // `data` is always read: see Reads.currentOfMbids.
    currentOfMbids: (mbids) => currentOfMbidsPostgres(on, mbids),
  };
}

/** The first column of the first row of a named statement, or undefined when it has no row. */
async function scalar<T>(store: PostgresStore, statement: typeof PRUNED_BEFORE, values: unknown[] = []) {
  const { rows } = await store.pool.query<[T]>({ ...statement, values });
  return rows[0]?.[0];
}

/**
 * {@link Reads} over a PostgreSQL store (issue 17, docs/POSTGRES_PORT.md step 3): the same answers
 * as `sqliteReads` over the same rows, byte for byte. Each read is one statement on a pooled
 * connection, so concurrent reads run in parallel up to the
 * pool's size; there is no snapshot across two reads, as on SQLite outside a transaction, but
 * within `snapshot` (a REPEATABLE READ READ ONLY transaction on one connection).
 */
export function postgresReads(store: PostgresStore): Reads {
  const prunedBefore = async () => {
    const value = await scalar<string>(store, PRUNED_BEFORE);
    return value === undefined ? undefined : Number(value);
  };
  return {
    ...postgresLedgerReads(store),
    ...postgresFeedReads(store),
    ...postgresStatusReads(store),
    ...currentReads(store.pool),
    changesOfMbidPage: (mbid, afterId, limit) => changesOfMbidPagePostgres(store, mbid, afterId, limit),
    changeCountOfMbid: async (mbid) => (await scalar<number>(store, CHANGE_COUNT_OF_MBID, [mbid]))!,
    prunedBefore,
    historyFrom: async () => {
      const { rows } = await store.pool.query<[string | null, number | null]>(HISTORY_FROM);
      const [pruned, oldest] = rows[0]!;
      return pruned !== null ? Number(pruned) : (oldest ?? undefined);
    },
    previousChange: (change) => previousChangePostgres(store, change),
    packetTimestamp: async (packet) =>
      (await scalar<string | null>(store, PACKET_TIMESTAMP, [packet])) ?? null,
    changesPage: (packet, entity, afterPosition, limit) =>
      changesPagePostgres(store, packet, entity, afterPosition, limit),
    search: (filter, after, limit, options) => searchHitsPostgres(store, filter, after, limit, options),
    searchCount: (filter) => searchCountPostgres(store, filter),
    removalOfMbid: (mbid) => removalOfMbidPostgres(store.pool, mbid),
    removalsPage: (range, after, limit) => removalsPagePostgres(store.pool, range, after, limit),
    removalCount: (range) => removalCountPostgres(store.pool, range),
    jsonDumpState: async (packet, entity) =>
      (await store.pool.query<JsonDumpState>({ ...JSON_DUMP_STATE, values: [entity, packet] })).rows[0],
    snapshot: (read) =>
      inPgTransaction(store.pool, async (client) => read(currentReads(client)), BEGIN_SNAPSHOT),
  };
}

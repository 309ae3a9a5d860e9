import type { Reads } from '../reads.js';
import { changesOfMbidPagePostgres, changesPagePostgres, previousChangePostgres } from './changeReads.js';
import type { PostgresStore } from './client.js';
import { currentOfMbidsPostgres } from './currentReads.js';
import { postgresFeedReads } from './feedReads.js';
import { searchCountPostgres, searchHitsPostgres } from './searchReads.js';

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
const OLDEST_PACKET = {
  name: 'livefeed_oldest_packet',
  text: 'SELECT min(number) FROM packets',
  rowMode: 'array' as const,
};
const PACKET_TIMESTAMP = {
  name: 'livefeed_packet_timestamp',
  text: 'SELECT timestamp FROM packets WHERE number = $1',
  rowMode: 'array' as const,
};

/** The first column of the first row of a named statement, or undefined when it has no row. */
async function scalar<T>(store: PostgresStore, statement: typeof PRUNED_BEFORE, values: unknown[] = []) {
  const { rows } = await store.pool.query<[T]>({ ...statement, values });
  return rows[0]?.[0];
}

/**
 * {@link Reads} over a PostgreSQL store (issue 17, docs/POSTGRES_PORT.md step 3): the same answers
 * as `sqliteReads` over the same rows, byte for byte. Each read is one statement on a pooled
 * connection (`historyFrom` two, as on SQLite), so concurrent reads run in parallel up to the
 * pool's size; there is no snapshot across two reads, as on SQLite outside a transaction.
 */
export function postgresReads(store: PostgresStore): Reads {
  const prunedBefore = async () => {
    const value = await scalar<string>(store, PRUNED_BEFORE);
    return value === undefined ? undefined : Number(value);
  };
  return {
    ...postgresFeedReads(store),
    currentOfMbid: async (mbid) => (await currentOfMbidsPostgres(store, [mbid]))[0],
    // `data` is always read: see Reads.currentOfMbids.
    currentOfMbids: (mbids) => currentOfMbidsPostgres(store, mbids),
    changesOfMbidPage: (mbid, afterId, limit) => changesOfMbidPagePostgres(store, mbid, afterId, limit),
    changeCountOfMbid: async (mbid) => (await scalar<number>(store, CHANGE_COUNT_OF_MBID, [mbid]))!,
    prunedBefore,
    historyFrom: async () => {
      const pruned = await prunedBefore();
      if (pruned !== undefined) return pruned;
      return (await scalar<number | null>(store, OLDEST_PACKET)) ?? undefined;
    },
    previousChange: (change) => previousChangePostgres(store, change),
    packetTimestamp: async (packet) =>
      (await scalar<string | null>(store, PACKET_TIMESTAMP, [packet])) ?? null,
    changesPage: (packet, entity, afterPosition, limit) =>
      changesPagePostgres(store, packet, entity, afterPosition, limit),
    search: (filter, after, limit, options) => searchHitsPostgres(store, filter, after, limit, options),
    searchCount: (filter) => searchCountPostgres(store, filter),
  };
}

import {
  BOOTSTRAP_POSITION_KEY,
  bootstrapDoneKey,
  COMPLETE_BOOTSTRAP_PACKET_SQL,
  continuationOf,
  HELD_ABOVE_SQL,
  RECORD_GAP_SQL,
} from '../../db/bootstrapQueries.js';
import { LATEST_PACKET_SQL } from '../../db/latestPacket.js';
import type { PostgresStore } from '../../db/postgres/client.js';
import { readMark } from '../../db/postgres/latestPacket.js';
import { notifyPacketsCompleted } from '../../db/postgres/notify.js';
import { inPgTransaction, pgRow, pgRows } from '../../db/postgres/sql.js';
import type { BootstrapStore } from '../bootstrapStore.js';
import { noteServedFrontierOn, readRewritesPostgres } from './feedServed.js';
import { ingestJsonDumpPostgres } from './ingest.js';
import { advanceLatestPacket } from './packetState.js';

/**
 * `livefeed bootstrap` into PostgreSQL (issue 14 First import, issue 17): each entity type through
 * the COPY ingest (ingest.ts) in one transaction with its `bootstrap:<dump>:<entity>` record, the
 * position as on SQLite, with the statements of db/bootstrapQueries.ts. None of SQLite's bulk
 * tricks: PostgreSQL has no rollback journal to switch to, and the MBID index stays while the
 * COPY runs (docs/POSTGRES_PORT.md, step 1, says what was measured). Closing `store` stays with
 * whoever opened it.
 */
export function postgresBootstrapStore(store: PostgresStore): BootstrapStore {
  return {
    feedRewrites: () => readRewritesPostgres(store.pool),
    async bootstrappedPacket(dump, entity) {
      const row = await pgRow<{ value: string }>(store.pool, LATEST_PACKET_SQL.readMeta, [
        bootstrapDoneKey(dump, entity),
      ]);
      return row === undefined ? undefined : Number(row.value);
    },
    importFullDump: ({ dump, archiveBytes: _bytes, ...options }) =>
      ingestJsonDumpPostgres(store, { ...options, file: null }, async (client) => {
        await pgRows(client, LATEST_PACKET_SQL.putMeta, [
          bootstrapDoneKey(dump, options.entity),
          String(options.packet),
        ]);
      }),
    recordBootstrapPosition: (position) =>
      inPgTransaction(store.pool, async (client) => {
        // Its packet and gap may lower the frontier: what was served before stays noted.
        await noteServedFrontierOn(client);
        const held = await pgRow<{ first: number | null; last: number | null }>(client, HELD_ABOVE_SQL, [
          position.packet,
        ]);
        const continuation = continuationOf(position.packet, held);
        const { gap } = continuation;
        if (gap) await pgRows(client, RECORD_GAP_SQL, [gap.from, gap.to, position.at]);
        await pgRows(client, COMPLETE_BOOTSTRAP_PACKET_SQL, [position.packet, position.at, position.at]);
        await pgRows(client, LATEST_PACKET_SQL.putMeta, [BOOTSTRAP_POSITION_KEY, JSON.stringify(position)]);
        await advanceLatestPacket(client);
        await notifyPacketsCompleted(client, [position.packet]);
        return { ...continuation, latest: (await readMark(client))?.number ?? null };
      }),
    // No segments to merge; but the search's common-words threshold reads the index size from
    // the planner's estimate (db/postgres/searchReads.ts), stale or -1 until autovacuum's ANALYZE
    // comes by after a bulk load: counted now, so the first searches rank as they should.
    mergeSearchIndex: async () => {
      await store.pool.query('ANALYZE search_index');
      return undefined;
    },
  };
}

import type { FeedReads } from '../feedReads.js';
import {
  PACKET_ROW_SQL,
  type ReplicationPacketRow,
  type RowChangeRow,
  rowChangeCountSql,
  rowChangesPageSql,
  storedRow,
  type TableChangesRow,
  tableChangesSql,
} from '../replicationQueries.js';
import { limitClause } from '../statements.js';
import {
  countFeedEventsPostgres,
  feedFrontierPostgres,
  feedHeadPostgres,
  readFeedEventsPostgres,
} from './changeFeedReads.js';
import type { PostgresStore } from './client.js';
import { namedSql } from './named.js';
import { CODE_POINT_ORDER } from './sql.js';

/**
 * {@link FeedReads} over a PostgreSQL store (docs/POSTGRES_PORT.md, step 4): the statements of
 * db/replicationQueries.ts and db/changeFeedQueries.ts, written once for both stores, as named
 * statements on the pool; the change stream's reads each in one snapshot (changeFeedReads.ts).
 * Row images are jsonb, read as text (`CAST(... AS TEXT)` in the shared statement): the same JSON
 * value as SQLite's stored text, with jsonb's key order and spacing. Every method rejects with the
 * driver's error (a lost connection); see FeedReads for the others.
 */
export function postgresFeedReads(store: PostgresStore): FeedReads {
  const rows = async <T>(sql: string, params: unknown[]): Promise<T[]> =>
    (await store.pool.query(namedSql(sql), params)).rows as T[];
  const replicationPacketRow = async (packet: number) =>
    (await rows<ReplicationPacketRow>(PACKET_ROW_SQL, [packet]))[0];
  return {
    replicationPacketRow,
    storedReplicationPacket: async (packet) => storedRow(await replicationPacketRow(packet)),
    tableChangesOf: (packet) => rows<TableChangesRow>(tableChangesSql(CODE_POINT_ORDER), [packet]),
    rowChangesPage: async (packet, filter, afterOrd, limit) => {
      limitClause(limit);
      const { sql, params } = rowChangesPageSql(packet, filter, afterOrd, 'LIMIT ?');
      return rows<RowChangeRow>(sql, [...params, limit]);
    },
    rowChangeCount: async (packet, filter) => {
      const { sql, params } = rowChangeCountSql(packet, filter);
      return (await rows<{ count: number }>(sql, params))[0]!.count;
    },
    readFeedEvents: (query) => readFeedEventsPostgres(store, query),
    countFeedEvents: (query) => countFeedEventsPostgres(store, query),
    feedFrontier: () => feedFrontierPostgres(store),
    feedHead: () => feedHeadPostgres(store),
  };
}

import { BOOTSTRAP_STATE_SQL, bootstrapStateOf } from '../bootstrapQueries.js';
import { type LatestMark, MARK_KEY } from '../latestPacket.js';
import type { LedgerReads } from '../ledgerReads.js';
import {
  type FailureRow,
  failuresStart,
  OPERATOR_SQL,
  type QuarantineFilter,
  type QuarantineRow,
  quarantineStart,
  quarantineWhere,
} from '../operatorQueries.js';
import { type DumpRow, type FeedFileRow, LEDGER_SQL, type PacketRow } from '../queries.js';
import type { PostgresStore } from './client.js';
import { latestPacketNumberOn } from './latestPacket.js';
import { inPgReadSnapshot } from './snapshot.js';
import { pgSql } from './sql.js';
import { webhookStatesPostgres } from './webhooks.js';

/**
 * The ledger reads on PostgreSQL (issue 17, docs/POSTGRES_PORT.md step 4), the twins of
 * db/ledgerReads.ts `sqliteLedgerReads`: the statements written once in db/queries.ts
 * (`LEDGER_SQL`), db/operatorQueries.ts (`OPERATOR_SQL`) and db/bootstrapQueries.ts, numbered by
 * `pgSql` and prepared once per pooled connection under a name, as SQLite's cachedStatement does.
 * A page's limit is a parameter here (SQLite writes it into the text). Each read is one statement
 * (latestPacket: see {@link LATEST_PACKET}).
 */

/** A named statement of the shared `text` (`?` parameters). */
const named = (name: string, text: string) => ({ name: `livefeed_${name}`, text: pgSql(text) });

const PACKET_BY_NUMBER = named('packet_by_number', LEDGER_SQL.packetByNumber);
const DUMPS_OF_PACKET = named('dumps_of_packet', LEDGER_SQL.dumpsOfPacket);
const FEED_FILE_BY_NAME = named('feed_file_by_name', LEDGER_SQL.feedFileByName);
const FAILURE_COUNT = named('failure_count', OPERATOR_SQL.failureCount);
const PACKET_COUNT = named('packet_count', LEDGER_SQL.packetCount);
const BOOTSTRAP_STATE = named('bootstrap_state', BOOTSTRAP_STATE_SQL);
/**
 * The newest complete packet in one statement (db/latestPacket.ts reads the first packet, the mark
 * and the packet's row in three): one round trip instead of three, and one snapshot. PostgreSQL
 * only: it reads the mark's JSON in SQL (`jsonb`). (mark key) → first packet, the mark's text, and
 * the row of its packet when the mark counts from the first packet.
 */
const LATEST_PACKET = named(
  'latest_packet',
  `SELECT f.first, m.value AS mark, p.number, p.timestamp, p.schema_sequence AS "schemaSequence",
     p.synced_at AS "syncedAt"
   FROM (SELECT min(number) AS first FROM packets) f
   LEFT JOIN meta m ON m.key = ?
   LEFT JOIN packets p ON p.number = (m.value::jsonb ->> 'number')::integer
     AND (m.value::jsonb ->> 'from')::integer = f.first`,
);
type LatestRow = { first: number | null; mark: string | null } & {
  [K in keyof PacketRow]: PacketRow[K] | null;
};
/** The paged statements, exported for the plan test (test/db/postgres/ledgerPlans.test.ts). */
export const PACKETS_PAGE = named('packets_page', `${LEDGER_SQL.packetsPage} LIMIT ?`);
export const FAILURES_PAGE = named('failures_page', `${OPERATOR_SQL.failuresPage} LIMIT ?`);

/** The quarantine's statements of the filter's shape (four shapes: packet and entity type set or not). */
export function quarantineStatements(filter: QuarantineFilter) {
  const where = quarantineWhere(filter);
  const shape = `${filter.packet === undefined ? '' : '_packet'}${filter.entity === undefined ? '' : '_entity'}`;
  return {
    params: where.params,
    page: named(`quarantine_page${shape}`, `${OPERATOR_SQL.quarantinePage(where.sql)} LIMIT ?`),
    count: named(`quarantine_count${shape}`, OPERATOR_SQL.quarantineCount(where.sql)),
  };
}

/** The page limit as a parameter: a safe non-negative integer, as SQLite's `limitClause` checks. */
function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`page limit ${limit}`);
  return limit;
}

/** {@link LedgerReads} over a PostgreSQL store: the same answers as SQLite over the same rows. */
export function postgresLedgerReads(store: PostgresStore): LedgerReads {
  const rows = async <T>(statement: { name: string; text: string }, values: unknown[] = []) =>
    (await store.pool.query({ ...statement, values })).rows as T[];
  const count = async (statement: { name: string; text: string }, values: unknown[] = []) =>
    (await rows<{ n: number }>(statement, values))[0]!.n;
  const packetByNumber = async (number: number) => (await rows<PacketRow>(PACKET_BY_NUMBER, [number]))[0];
  return {
    latestPacket: async () => {
      const [row] = await rows<LatestRow>(LATEST_PACKET, [MARK_KEY]);
      if (!row || row.first === null) return undefined;
      const mark = row.mark === null ? undefined : (JSON.parse(row.mark) as LatestMark);
      if (mark?.from === row.first) {
        const { first: _first, mark: _mark, ...packet } = row;
        // No row when the mark names no packet (null), or one not stored, as on SQLite.
        return packet.number === null ? undefined : (packet as PacketRow);
      }
      // A stale mark (a packet stored below its first one): walk as SQLite does, in one snapshot
      // on one connection (so on one server when reads go to replicas).
      return inPgReadSnapshot(store.pool, async (client) => {
        const number = await latestPacketNumberOn(client);
        if (number === undefined) return undefined;
        return (await client.query<PacketRow>({ ...PACKET_BY_NUMBER, values: [number] })).rows[0];
      });
    },
    packetByNumber,
    packetsPage: async (before, limit) =>
      rows<PacketRow>(PACKETS_PAGE, [before ?? Number.MAX_SAFE_INTEGER, checkedLimit(limit)]),
    packetCount: () => count(PACKET_COUNT),
    dumpsOfPacket: (packet) => rows<DumpRow>(DUMPS_OF_PACKET, [packet]),
    feedFileByName: async (name) => (await rows<FeedFileRow>(FEED_FILE_BY_NAME, [name]))[0],
    failuresPage: async (after, limit) =>
      rows<FailureRow>(FAILURES_PAGE, [...failuresStart(after), checkedLimit(limit)]),
    failureCount: () => count(FAILURE_COUNT),
    quarantinePage: async (filter, after, limit) => {
      const statements = quarantineStatements(filter);
      const values = [...statements.params, ...quarantineStart(after), checkedLimit(limit)];
      // `raw` is bytea (exact bytes); SQLite holds the line as UTF-8 text decoded the same way.
      return (await rows<Omit<QuarantineRow, 'raw'> & { raw: Buffer }>(statements.page, values)).map(
        (row) => ({ ...row, raw: row.raw.toString('utf8') }),
      );
    },
    quarantineCount: (filter) => {
      const statements = quarantineStatements(filter);
      return count(statements.count, statements.params);
    },
    bootstrapState: async () => bootstrapStateOf(await rows(BOOTSTRAP_STATE)),
    webhookStates: () => webhookStatesPostgres(store),
  };
}

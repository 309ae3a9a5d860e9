import {
  REMOVAL_SQL,
  type RemovalKey,
  type RemovalRange,
  type RemovalRow,
  removalParams,
  removalStart,
} from '../replicationQueries.js';
import { type PgQueryable, pgSql } from './sql.js';

/**
 * The twins on PostgreSQL of the removal reads of db/replicationQueries.ts: the same statements (`?` numbered by `pgSql`), as named
 * statements prepared once per connection; the page binds its LIMIT where SQLite writes it into
 * the text. Rows come back as SQLite gives them (int8 as numbers: the store's pool).
 */

/** A named statement of `sql`; `name` differs for each text (PostgreSQL refuses one name for two). */
export function named(name: string, sql: string) {
  return { name, text: pgSql(sql) };
}

/** The statements of the reads below, exported for the plan test (test/db/postgres/readPlans.test.ts). */
export const REMOVAL_STATEMENTS = {
  ofMbid: named('livefeed_removal_of_mbid', REMOVAL_SQL.ofMbid),
  page: (range: RemovalRange) =>
    named(
      `livefeed_removals_page${range.entity === undefined ? '' : '_entity'}`,
      `${REMOVAL_SQL.page(range)} LIMIT ?`,
    ),
  count: (range: RemovalRange) =>
    named(`livefeed_removal_count${range.entity === undefined ? '' : '_entity'}`, REMOVAL_SQL.count(range)),
};

/** The newest removal of `mbid`, or undefined (see replicationQueries.ts `removalOfMbid`). */
export async function removalOfMbidPostgres(on: PgQueryable, mbid: string): Promise<RemovalRow | undefined> {
  const { rows } = await on.query<RemovalRow>({ ...REMOVAL_STATEMENTS.ofMbid, values: [mbid] });
  return rows[0];
}

/**
 * Up to `limit` removals in `range` after `after`, ordered by packet, MBID, kind (see
 * replicationQueries.ts `removalsPage`). Rejects with a RangeError for a bad limit.
 */
export async function removalsPagePostgres(
  on: PgQueryable,
  range: RemovalRange,
  after: RemovalKey | undefined,
  limit: number,
): Promise<RemovalRow[]> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`page limit ${limit}`);
  const values = [...removalParams(range), ...removalStart(after), limit];
  return (await on.query<RemovalRow>({ ...REMOVAL_STATEMENTS.page(range), values })).rows;
}

/** Number of removals in `range`. */
export async function removalCountPostgres(on: PgQueryable, range: RemovalRange): Promise<number> {
  const { rows } = await on.query<{ n: number }>({
    ...REMOVAL_STATEMENTS.count(range),
    values: removalParams(range),
  });
  return rows[0]!.n;
}

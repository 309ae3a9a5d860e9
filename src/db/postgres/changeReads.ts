import type { EntityType } from '../../feed/entities.js';
import { changeKey, dumpIdRange } from '../keys.js';
import type { ChangeRow } from '../queries.js';
import type { PostgresStore } from './client.js';

/**
 * Reads of `changes` rows on PostgreSQL, the twins of db/queries.ts `changesPage` and
 * `changesOfMbidPage` and db/changeVersionQueries.ts `previousChange`: a row per change, each
 * line's stored text turned into its UTF-8 bytes. Not one aggregated row as on SQLite, where a
 * Buffer per value was the cost: here the server's work and the transfer are, and `string_agg`
 * added to them (50-line page of 2.8 KB recording lines on a loopback cluster: rows 1.4-3.5 ms,
 * `string_agg` 3.5-5.7 ms, on a busy shared machine; docs/POSTGRES_PORT.md).
 */

/** A named (per connection prepared) statement of the `changes` rows `where` selects ($n parameters). */
function selectChanges(name: string, where: string) {
  return { name, text: `SELECT id, mbid, data FROM changes ${where}`, rowMode: 'array' as const };
}

/** The statements of the reads below, exported for the plan test (test/db/postgres/readPlans.test.ts). */
export const DUMP_PAGE = selectChanges(
  'livefeed_changes_page',
  'WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3',
);
export const MBID_PAGE = selectChanges(
  'livefeed_changes_of_mbid_page',
  'WHERE mbid = $1 AND id > $2 ORDER BY id LIMIT $3',
);
export const PREVIOUS = selectChanges(
  'livefeed_previous_change',
  'WHERE mbid = $1 AND id < $2 ORDER BY id DESC LIMIT 1',
);

/** Runs a {@link selectChanges} statement; the rows in the statement's order. */
async function changeRows(
  store: PostgresStore,
  statement: ReturnType<typeof selectChanges>,
  values: unknown[],
): Promise<ChangeRow[]> {
  const { rows } = await store.pool.query<[id: number, mbid: string, data: string]>({ ...statement, values });
  return rows.map(([id, mbid, data]) => ({ id, ...changeKey(id), mbid, data: Buffer.from(data, 'utf8') }));
}

/** The page limit as a parameter: a safe non-negative integer, as SQLite's `limitClause` checks. */
function checkedLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`page limit ${limit}`);
  return limit;
}

/**
 * Up to `limit` changes of one JSON dump after line `afterPosition`, in file order (one range
 * read of the primary key). Rejects with a RangeError for a bad limit, or the driver's error.
 */
export async function changesPagePostgres(
  store: PostgresStore,
  packet: number,
  entity: EntityType,
  afterPosition: number,
  limit: number,
): Promise<ChangeRow[]> {
  const [first, last] = dumpIdRange(packet, entity);
  return changeRows(store, DUMP_PAGE, [first + afterPosition, last, checkedLimit(limit)]);
}

/**
 * Up to `limit` changes of `mbid` after change id `afterId` (0: from the oldest), oldest first:
 * a seek on `changes_mbid` (mbid, id). Rejects with a RangeError for a bad limit, or the driver's
 * error.
 */
export async function changesOfMbidPagePostgres(
  store: PostgresStore,
  mbid: string,
  afterId: number,
  limit: number,
): Promise<ChangeRow[]> {
  return changeRows(store, MBID_PAGE, [mbid, afterId, checkedLimit(limit)]);
}

/** The held version of `change.mbid` just before `change`, or undefined (one reverse seek). */
export async function previousChangePostgres(
  store: PostgresStore,
  change: Pick<ChangeRow, 'id' | 'mbid'>,
): Promise<ChangeRow | undefined> {
  return (await changeRows(store, PREVIOUS, [change.mbid, change.id]))[0];
}

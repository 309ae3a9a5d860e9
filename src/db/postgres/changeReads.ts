import type { EntityType } from '../../feed/entities.js';
import { dumpIdRange } from '../keys.js';
import { type AggregateRow, aggregateRows, type ChangeRow } from '../queries.js';
import type { PostgresStore } from './client.js';

/**
 * Reads of `changes` rows on PostgreSQL, the twins of db/queries.ts `changesPage` and
 * `changesOfMbidPage` and db/changeVersionQueries.ts `previousChange`. As on SQLite, a page comes
 * back as ONE row: ids, MBIDs and byte lengths as comma-separated lists and every line's text back
 * to back (`string_agg`), turned into one Buffer whose views are the rows' `data`: one value to
 * parse and one Buffer per page instead of three values and a Buffer per change.
 */

/**
 * A named (per connection prepared) statement that aggregates the `changes` rows `where` selects
 * (WHERE, ORDER BY and LIMIT clauses with $n parameters), in ascending id.
 */
function aggregateChanges(name: string, where: string) {
  return {
    name,
    text: `SELECT string_agg(id::text, ',' ORDER BY id), string_agg(mbid, ',' ORDER BY id),
        string_agg(octet_length(data)::text, ',' ORDER BY id), string_agg(data, '' ORDER BY id)
      FROM (SELECT id, mbid, data FROM changes ${where}) c`,
    rowMode: 'array' as const,
  };
}

/** The statements of the reads below, exported for the plan test (test/db/postgres/readPlans.test.ts). */
export const DUMP_PAGE = aggregateChanges(
  'livefeed_changes_page',
  'WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3',
);
export const MBID_PAGE = aggregateChanges(
  'livefeed_changes_of_mbid_page',
  'WHERE mbid = $1 AND id > $2 ORDER BY id LIMIT $3',
);
export const PREVIOUS = aggregateChanges(
  'livefeed_previous_change',
  'WHERE mbid = $1 AND id < $2 ORDER BY id DESC LIMIT 1',
);

type TextAggregateRow = [
  ids: string | null,
  mbids: string | null,
  lengths: string | null,
  data: string | null,
];

/** Runs an aggregate statement and splits its one row into changes. */
async function changeRows(
  store: PostgresStore,
  statement: ReturnType<typeof aggregateChanges>,
  values: unknown[],
): Promise<ChangeRow[]> {
  const { rows } = await store.pool.query<TextAggregateRow>({ ...statement, values });
  const [ids, mbids, lengths, data] = rows[0]!;
  if (ids === null) return [];
  const row: AggregateRow = [ids, mbids!, lengths!, Buffer.from(data!, 'utf8')];
  return aggregateRows(row);
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

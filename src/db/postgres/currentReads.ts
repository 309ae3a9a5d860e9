import type pg from 'pg';
import type { EntityType } from '../../feed/entities.js';
import { type CurrentRow, type CurrentStatus, currentRowFrom, HELD_MBIDS_SQL } from '../currentQueries.js';
import { changeKey } from '../keys.js';
import { BEGIN_SNAPSHOT, inPgTransaction, type PgQueryable } from './sql.js';

/**
 * The current state on PostgreSQL: the twin of db/currentQueries.ts `currentOfMbids`, with the same
 * two index reads per MBID and the same rule (`currentRowFrom`). For each MBID of the array:
 * - the newest JSON dump line: one reverse seek in `changes_mbid` (mbid, id), the line read by its
 *   primary key;
 * - the newest removal: one reverse seek in `removals_mbid` (mbid, packet, kind): of a deletion and
 *   a merge in one packet, the merge ('MERGED' > 'DELETED' in every collation) names the target.
 * One statement for any number of MBIDs (LATERAL over `unnest`), prepared once per connection.
 * Exported for the plan test (test/db/postgres/readPlans.test.ts).
 */
export const CURRENT_OF = {
  name: 'livefeed_current_of_mbids',
  text: `SELECT m.mbid, c.id, c.data, r.entity, r.kind, r.packet, r.merged_into
    FROM unnest($1::text[]) AS m (mbid)
    LEFT JOIN LATERAL (
      SELECT id, data FROM changes WHERE changes.mbid = m.mbid ORDER BY id DESC LIMIT 1
    ) c ON true
    LEFT JOIN LATERAL (
      SELECT entity, kind, packet, merged_into FROM removals WHERE removals.mbid = m.mbid
      ORDER BY packet DESC, kind DESC LIMIT 1
    ) r ON true`,
  rowMode: 'array' as const,
};

type RawCurrentRow = [
  mbid: string,
  changeId: number | null,
  data: string | null,
  removedEntity: EntityType | null,
  removal: 'DELETED' | 'MERGED' | null,
  removedPacket: number | null,
  mergedInto: string | null,
];

/**
 * The current state of each of `mbids` (lower case) in one statement, in the order given;
 * undefined where not held, duplicates answer the same row. `on`: the pool, or a client in a
 * snapshot (Reads.snapshot). Each newest line's `data` is the
 * stored text's UTF-8 bytes, as SQLite gives them.
 * @throws the driver's error when the query fails
 */
export async function currentOfMbidsPostgres(
  on: PgQueryable,
  mbids: readonly string[],
): Promise<(CurrentRow | undefined)[]> {
  if (mbids.length === 0) return [];
  // Made unique here, as on SQLite: a duplicate costs no second pair of seeks.
  const unique = [...new Set(mbids)];
  const { rows } = await on.query<RawCurrentRow>({ ...CURRENT_OF, values: [unique] });
  const byMbid = new Map<string, CurrentRow | undefined>();
  for (const [mbid, changeId, data, removedEntity, removal, removedPacket, mergedInto] of rows) {
    const latest =
      changeId === null
        ? null
        : { id: changeId, ...changeKey(changeId), mbid, data: Buffer.from(data!, 'utf8') };
    byMbid.set(mbid, currentRowFrom(mbid, latest, removedEntity, removal, removedPacket, mergedInto));
  }
  return mbids.map((mbid) => byMbid.get(mbid));
}

/** MBIDs read per batch by {@link currentCountsPostgres}: a bounded array per statement. */
const COUNT_BATCH = 10_000;

/**
 * Number of MBIDs held in the current state, per status: the twin of db/currentQueries.ts
 * `currentCounts`, with the same rule (`currentRowFrom`). Every MBID of `changes` and `removals`
 * is read through a cursor in batches of {@link COUNT_BATCH}, each batch's current state in one
 * statement, all in one REPEATABLE READ READ ONLY snapshot on one connection of `pool`: seconds
 * to minutes on millions of entities, for reports and tests, not for a request path. `batch`:
 * MBIDs per batch (a test makes several of a small story).
 * @throws the driver's error when a statement fails
 */
export async function currentCountsPostgres(
  pool: pg.Pool,
  batch = COUNT_BATCH,
): Promise<Record<CurrentStatus, number>> {
  const counts: Record<CurrentStatus, number> = { CURRENT: 0, DELETED: 0, MERGED: 0 };
  await inPgTransaction(
    pool,
    async (client) => {
      // A cursor lives until the transaction ends: nothing to close.
      await client.query(`DECLARE livefeed_held_mbids NO SCROLL CURSOR FOR ${HELD_MBIDS_SQL}`);
      for (;;) {
        const { rows } = await client.query<[string]>({
          text: `FETCH ${Math.max(1, Math.floor(batch))} FROM livefeed_held_mbids`,
          rowMode: 'array',
        });
        if (rows.length === 0) return;
        for (const row of await currentOfMbidsPostgres(
          client,
          rows.map(([mbid]) => mbid),
        )) {
          if (row) counts[row.status]++;
        }
      }
    },
    BEGIN_SNAPSHOT,
  );
  return counts;
}

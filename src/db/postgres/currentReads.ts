import type { EntityType } from '../../feed/entities.js';
import { type CurrentRow, currentRowFrom } from '../currentQueries.js';
import { changeKey } from '../keys.js';
import type { PgQueryable } from './sql.js';

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

import type Database from 'better-sqlite3';
import { ENTITY_ROW_ID_SQL, ENTITY_ROW_TABLES_SQL } from '../db/schema.js';
import { ENTITY_TYPES, type EntityType, entityOfTable } from '../feed/entities.js';
import { ArchiveError } from '../feed/errors.js';

/** `musicbrainz.<table>` of each entity type (`release-group` → `musicbrainz.release_group`). */
export const ENTITY_TABLES = ENTITY_TYPES.map((entity) => `musicbrainz.${entity.replace('-', '_')}`);
const REDIRECT_TABLES = ENTITY_TABLES.map((table) => `${table}_gid_redirect`);
const REDIRECT = /^musicbrainz\.(\w+)_gid_redirect$/;

const CANDIDATES = `
  SELECT seqid, table_name AS tbl, op, old_data ->> 'gid' AS "oldGid", old_data ->> 'id' AS "oldId",
         new_data ->> 'gid' AS "newGid", new_data ->> 'new_id' AS "newId"
  FROM row_changes
  WHERE packet = ? AND ((op = 'd' AND table_name IN (${ENTITY_TABLES.map(() => '?').join(', ')}))
     OR (op = 'i' AND table_name IN (${REDIRECT_TABLES.map(() => '?').join(', ')})))
  ORDER BY ord`;

// The newest stored image of row `id` of an entity table that shows its gid, in this packet or an
// earlier one, found through the partial index row_changes_entity_row (see db/schema.ts).
const GID_OF_ROW = `
  SELECT coalesce(new_data ->> 'gid', old_data ->> 'gid') AS gid FROM row_changes
  WHERE ${ENTITY_ROW_TABLES_SQL} AND table_name = ? AND ${ENTITY_ROW_ID_SQL} = ? AND packet <= ?
    AND coalesce(new_data ->> 'gid', old_data ->> 'gid') IS NOT NULL
  ORDER BY packet DESC, ord DESC LIMIT 1`;

const INSERT_REMOVAL = `
  INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (packet, mbid, kind) DO UPDATE SET
    entity = excluded.entity, merged_into = coalesce(excluded.merged_into, removals.merged_into)`;

/**
 * The statements of the removals with `?` parameters, written once for SQLite and PostgreSQL
 * (sync/postgres/replication.ts; `->>` reads both SQLite JSON text and jsonb).
 */
export const REMOVAL_SQL = {
  /** (packet, ...ENTITY_TABLES, ...REDIRECT_TABLES) → {@link Candidate} rows in apply order. */
  candidates: CANDIDATES,
  /** (table, id as text, packet) → gid. */
  gidOfRow: GID_OF_ROW,
  /** (mbid, entity, packet, kind, merged_into). */
  insert: INSERT_REMOVAL,
};

/** The arguments of {@link REMOVAL_SQL}.candidates for `packet`. */
export function candidateArgs(packet: number): (number | string)[] {
  return [packet, ...ENTITY_TABLES, ...REDIRECT_TABLES];
}

/** A row change that may be a removal: a delete on an entity table or an insert into a gid redirect table. */
export interface Candidate {
  seqid: number;
  tbl: string;
  op: string;
  oldGid: string | null;
  oldId: string | number | null;
  newGid: string | null;
  newId: string | number | null;
}

/** A deleted entity row whose MBID no stored packet shows. */
export interface UnresolvedRemoval {
  table: string;
  id: string | null;
}

/** What {@link deriveRemovals} stored. */
export interface DerivedRemovals {
  count: number;
  unresolved: UnresolvedRemoval[];
}

/** How {@link deriveRemovalsWith} reads and writes its store (sync or async alike). */
export interface RemovalStatements {
  /** The gid of row `id` (as text) of entity table `table`, as this or an earlier stored packet shows it. */
  gidOf(table: string, id: string): string | null | Promise<string | null>;
  /** Inserts (or merges into) the removal of `mbid`. */
  insert(mbid: string, entity: EntityType, kind: 'MERGED' | 'DELETED', mergedInto: string | null): unknown;
}

/**
 * Derives the removals of `packet` from its stored row changes (FEED.md, Replication packet
 * archives) and inserts them into `removals`:
 * - an insert into `musicbrainz.<entity>_gid_redirect` is a MERGED removal of its `gid`, merged
 *   into the gid of the entity row with id `new_id` when this or an earlier stored packet shows it;
 * - a delete on `musicbrainz.<entity>` is a DELETED removal of its `gid` (from the old row, else
 *   from the newest stored image of that row id), unless the same packet merged that gid: upstream
 *   deletes the source row of every merge.
 * Deletions whose gid no stored packet shows (v1 keeps only key columns) are returned, not stored.
 * Call after the packet's rows and its `replication_packets` row are written. `candidates` are the
 * rows of {@link REMOVAL_SQL}.candidates; `statements` run the other two on the store.
 * @throws ArchiveError (prefixed with `where`) for a redirect insert without a gid.
 */
export async function deriveRemovalsWith(
  candidates: readonly Candidate[],
  statements: RemovalStatements,
  where: string,
): Promise<DerivedRemovals> {
  const lookup = async (table: string, id: string | number | null) =>
    id === null ? null : await statements.gidOf(table, String(id));
  const merged = new Set<string>();
  for (const row of candidates.filter((c) => c.op === 'i')) {
    if (row.newGid === null)
      throw new ArchiveError(`${where}: insert into ${row.tbl} (seqid ${row.seqid}) has no gid`);
    const entity = entityOfTable(REDIRECT.exec(row.tbl)![1]!) as EntityType;
    const target = await lookup(row.tbl.replace(/_gid_redirect$/, ''), row.newId);
    await statements.insert(row.newGid, entity, 'MERGED', target);
    merged.add(row.newGid);
  }
  const unresolved: UnresolvedRemoval[] = [];
  let deleted = 0;
  for (const row of candidates.filter((c) => c.op === 'd')) {
    const gid = row.oldGid ?? (await lookup(row.tbl, row.oldId));
    if (gid === null) {
      unresolved.push({ table: row.tbl, id: row.oldId === null ? null : String(row.oldId) });
    } else if (!merged.has(gid)) {
      await statements.insert(
        gid,
        entityOfTable(row.tbl.slice('musicbrainz.'.length)) as EntityType,
        'DELETED',
        null,
      );
      deleted++;
    }
  }
  return { count: merged.size + deleted, unresolved };
}

/** {@link deriveRemovalsWith} on the SQLite connection of the packet's transaction. */
export function deriveRemovals(
  sqlite: Database.Database,
  packet: number,
  where: string,
): Promise<DerivedRemovals> {
  const candidates = sqlite.prepare(CANDIDATES).all(...candidateArgs(packet)) as Candidate[];
  const gidOf = sqlite.prepare(GID_OF_ROW).pluck();
  const insert = sqlite.prepare(INSERT_REMOVAL);
  return deriveRemovalsWith(
    candidates,
    {
      gidOf: (table, id) => (gidOf.get(table, id, packet) as string | undefined) ?? null,
      insert: (mbid, entity, kind, mergedInto) => insert.run(mbid, entity, packet, kind, mergedInto),
    },
    where,
  );
}

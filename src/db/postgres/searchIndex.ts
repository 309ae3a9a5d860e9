import type pg from 'pg';
import { idPacketSql } from '../keys.js';
import { FIELD_COLUMNS_PG, PARSED_LINE } from './searchFields.js';

/**
 * The search index on PostgreSQL (issue 15 Search, issue 17; docs/POSTGRES_PORT.md step 5): the twin
 * of db/searchIndex.ts, with its rule. `search_index` (drizzle/postgres/0001_search_and_entity_row.sql)
 * holds one row per CURRENT entity, `id` its newest change id: an MBID's line is indexed when it is
 * the MBID's newest line (largest id in `changes_mbid`) and no removal of the same or a later packet
 * exists (`removals_mbid`; a removal wins over a JSON dump line of its packet). Its columns are
 * read from the stored line in SQL (postgres/searchFields.ts); `document` is generated from them
 * (its expression since drizzle/postgres/0004_search_document_skips_empty.sql).
 * Every function runs set-based statements on `client`, inside the caller's transaction (the dump's
 * or the packet's), so the index never drifts from the rows the current state is read from.
 * Unlike SQLite's contentless FTS5 table, deleting an entry that is not there is harmless here, so
 * the deletions need not prove an entry exists first. Each rejects with the driver's error.
 */

/** One JSON dump's change id range [first, last] (db/keys.ts, dumpIdRange) and its packet. */
export interface IndexedRange {
  first: number;
  last: number;
  packet: number;
}

/** SQL: the newest change id of MBID expression `mbid` (one reverse seek in `changes_mbid`). */
const newestOf = (mbid: string) => `(SELECT id FROM changes WHERE mbid = ${mbid} ORDER BY id DESC LIMIT 1)`;

/** SQL: MBID `mbid` has no removal of packet `packet` or later (one seek in `removals_mbid`). */
const notRemovedSince = (mbid: string, packet: string) =>
  `NOT EXISTS (SELECT 1 FROM removals WHERE mbid = ${mbid} AND packet >= ${packet})`;

// The dump's lines ($1..$2) that are their MBID's newest line.
const NEWEST_IN_DUMP = `c.id BETWEEN $1 AND $2 AND c.id = ${newestOf('c.mbid')}`;

// The version each of the dump's newest lines replaces: the MBID's newest line before the range.
const PREVIOUS_OF_DUMP = `SELECT (SELECT id FROM changes WHERE mbid = c.mbid AND id < $1 ORDER BY id DESC LIMIT 1) AS id,
    c.mbid FROM changes c WHERE ${NEWEST_IN_DUMP}`;

const INSERT = 'INSERT INTO search_index (id, name, sort_name, aliases, disambiguation)';
/** One index row per `changes` row `c` that `where` keeps. */
const insertWhere = (where: string) =>
  `${INSERT} SELECT c.id, ${FIELD_COLUMNS_PG} FROM changes c ${PARSED_LINE} WHERE ${where}`;

// Before an earlier copy of a dump is deleted: its entries go, the versions it replaced come back
// (when not removed since their packet).
const DROP_COPY = 'DELETE FROM search_index WHERE id BETWEEN $1 AND $2';
const RESTORE_PREVIOUS = insertWhere(`c.id IN (SELECT p.id FROM (${PREVIOUS_OF_DUMP}) p
  WHERE p.id IS NOT NULL AND ${notRemovedSince('p.mbid', idPacketSql('p.id'))})`);

/**
 * Before an earlier copy of the JSON dump `range` is deleted (its lines still stored): removes
 * its entries and indexes again the versions its lines had replaced. Nothing for a dump stored
 * the first time (an empty range). Call it right before the copy's `DELETE`.
 */
export async function unindexDumpCopy(client: pg.ClientBase, range: IndexedRange): Promise<void> {
  await client.query(DROP_COPY, [range.first, range.last]);
  await client.query(RESTORE_PREVIOUS, [range.first, range.last]);
}

// Once the dump's lines are written, from their columns staged by the ingest (the TEMP table
// SEARCH_STAGE, sync/postgres/searchStage.ts): the versions the dump's newest lines replace go,
// they come in unless removed by a packet of the dump's or later ($1: the dump's first id for the
// DELETE, its packet for the INSERTs). `newest` is the condition "staged line s is its MBID's
// newest line".

/** The TEMP table of the staged columns of one dump's lines (created by the ingest). */
export const SEARCH_STAGE = 'livefeed_search_stage';
const STAGE = `pg_temp.${SEARCH_STAGE}`;
const stagedStatements = (newest: string) => {
  const indexed = `${newest} AND ${notRemovedSince('s.mbid', '$1')}`;
  return {
    dropPrevious: `DELETE FROM search_index x USING (
        SELECT (SELECT id FROM changes WHERE mbid = s.mbid AND id < $1 ORDER BY id DESC LIMIT 1) AS id
        FROM ${STAGE} s WHERE ${newest}
      ) p WHERE x.id = p.id`,
    addStaged: `${INSERT} SELECT s.id, s.name, s.sort_name, s.aliases, s.disambiguation
      FROM ${STAGE} s WHERE NOT s.reparse AND ${indexed}`,
    // The lines staged without columns: read from the stored line, as a dump's lines once all were.
    addReparsed: insertWhere(`c.id IN (SELECT s.id FROM ${STAGE} s WHERE s.reparse AND ${indexed})`),
  };
};
// Any MBID's newest line: one reverse seek in `changes_mbid` per staged line.
const SEEKING = stagedStatements(`s.id = ${newestOf('s.mbid')}`);
// When no change is stored past the dump's range (dumps stored in order, a first import), the
// dump's lines are the newest of their MBIDs but where a later line of the dump has the same
// MBID: the stage alone answers, with no seek in `changes` (a hashed anti-join).
const WITHIN_STAGE = stagedStatements(
  `NOT EXISTS (SELECT 1 FROM ${STAGE} t WHERE t.mbid = s.mbid AND t.id > s.id)`,
);
// Whether changes are stored before and after the dump's range [$1, $2]: two seeks in its key
// (ORDER BY ... LIMIT 1 keeps to the key even while the table has no statistics yet, where an
// EXISTS was planned as a sequential scan of a first import's rows).
const NEIGHBOURS = `SELECT (SELECT id FROM changes WHERE id < $1 ORDER BY id DESC LIMIT 1) IS NOT NULL AS earlier,
  (SELECT id FROM changes WHERE id > $2 ORDER BY id LIMIT 1) IS NOT NULL AS later`;

/**
 * After every line of the JSON dump `range` is written and staged (before COMMIT): removes the
 * entries of the versions its lines replace and indexes the lines that are now the current
 * version of an entity not removed by a packet of the dump's or later, with the columns staged
 * (or, for a line staged without, read from the line). A dump of an older packet stored late
 * indexes nothing: its lines are not their MBID's newest. With no change stored before the dump,
 * nothing is replaced; with none after it, the stage tells which lines are the newest.
 */
export async function indexStagedDump(client: pg.ClientBase, range: IndexedRange): Promise<void> {
  const { rows } = await client.query<{ earlier: boolean; later: boolean }>(NEIGHBOURS, [
    range.first,
    range.last,
  ]);
  const { earlier, later } = rows[0]!;
  // Statistics of the stage, so that the planner hashes its anti-join (a TEMP table has none).
  if (!later) await client.query(`ANALYZE ${STAGE}`);
  const statements = later ? SEEKING : WITHIN_STAGE;
  if (earlier) await client.query(statements.dropPrevious, [range.first]);
  await client.query(statements.addStaged, [range.packet]);
  await client.query(statements.addReparsed, [range.packet]);
}

// The newest lines of the MBIDs replication packet $1 removes that it removes from the current
// state: a line of the packet or earlier, not removed by another packet of the line's or later.
const REMOVED_BY_PACKET = `SELECT n.id FROM (
    SELECT ${newestOf('r.mbid')} AS id, r.mbid FROM (SELECT DISTINCT mbid FROM removals WHERE packet = $1) r
  ) n WHERE n.id IS NOT NULL AND ${idPacketSql('n.id')} <= $1
  AND NOT EXISTS (SELECT 1 FROM removals WHERE mbid = n.mbid AND packet >= ${idPacketSql('n.id')} AND packet <> $1)`;

const DROP_REMOVED = `DELETE FROM search_index WHERE id IN (${REMOVED_BY_PACKET})`;
// ON CONFLICT: an entry is a function of its line, so one already there is the same entry.
const RESTORE_REMOVED = `${insertWhere(`c.id IN (${REMOVED_BY_PACKET})`)} ON CONFLICT (id) DO NOTHING`;

/**
 * For the replication packet writer (docs/POSTGRES_PORT.md step 2), in the packet's transaction
 * once its `removals` rows are written: removes from the index the entities replication packet
 * `packet` deletes or merges away (their newest line is of `packet` or earlier). An entity that a
 * later JSON dump shows again is indexed by that dump ({@link indexStagedDump}). The twin of
 * db/searchIndex.ts `RemovalIndexWriter.applyRemovals`.
 */
export async function unindexRemovals(client: pg.ClientBase, packet: number): Promise<void> {
  await client.query(DROP_REMOVED, [packet]);
}

/**
 * For the replication packet writer, when `packet` is stored again: before the earlier copy's
 * `removals` rows are deleted, indexes again the entities that copy removed (nothing the first
 * time). Then the new copy's removals are written and {@link unindexRemovals} runs. The twin of
 * `RemovalIndexWriter.reindexOldRemovals`.
 */
export async function reindexOldRemovals(client: pg.ClientBase, packet: number): Promise<void> {
  await client.query(RESTORE_REMOVED, [packet]);
}

/** The statements above, for the plan test (test/db/postgres/searchPlans.test.ts). */
export const INDEX_STATEMENTS = {
  DROP_COPY,
  RESTORE_PREVIOUS,
  NEIGHBOURS,
  DROP_PREVIOUS: SEEKING.dropPrevious,
  ADD_STAGED: SEEKING.addStaged,
  ADD_REPARSED: SEEKING.addReparsed,
  DROP_PREVIOUS_WITHIN_STAGE: WITHIN_STAGE.dropPrevious,
  ADD_STAGED_WITHIN_STAGE: WITHIN_STAGE.addStaged,
  ADD_REPARSED_WITHIN_STAGE: WITHIN_STAGE.addReparsed,
  DROP_REMOVED,
  RESTORE_REMOVED,
};

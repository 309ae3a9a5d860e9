import type { Database, Statement } from 'better-sqlite3';

/**
 * The search index (issue 15, Search): the FTS5 table `search_index` (drizzle/0005_search.sql),
 * contentless with `contentless_delete=1`, one row per CURRENT entity of the current state, its
 * rowid the entity's current change id (`current_state.change_id`, db/keys.ts). Columns: `name`
 * (the JSON dump line's `title` for recordings, releases, release groups and works, `name` for the
 * others), `sort_name` (`sort-name`), `aliases` (every alias's `name`, and its `sort-name` when it
 * differs) and `disambiguation`, tokenized by unicode61 with `remove_diacritics 2` (case and
 * diacritics do not matter). The writers keep it in the same transaction as the current state:
 * per JSON dump {@link SearchIndexWriter}, per replication packet {@link unindexRemovals}. Keyed by
 * change id, an entry never outlives its line: a newer version is a new rowid, and the old one is
 * deleted by id (contentless_delete needs no old values).
 */

/** Entity types whose JSON dump lines name the entity in `title` (the others use `name`). */
export const TITLED_ENTITY_TYPES = ['recording', 'release', 'release-group', 'work'] as const;

// The columns of one index row from a `changes` row `c`. The json_extract calls share SQLite's JSON
// parse cache, so the line is parsed once per row; json_each reads the aliases array from that
// parse (`json_each(c.data, '$.aliases')` parsed the whole line again: 2.3 times slower).
const TITLED = TITLED_ENTITY_TYPES.map((entity) => `'${entity}'`).join(', ');
const INDEX_COLUMNS = `c.id,
  json_extract(c.data, iif(c.entity IN (${TITLED}), '$.title', '$.name')),
  json_extract(c.data, '$."sort-name"'),
  (SELECT group_concat(iif(a.value ->> 'sort-name' IS a.value ->> 'name', a.value ->> 'name',
     concat_ws(' ', a.value ->> 'name', a.value ->> 'sort-name')), ' ') FROM json_each(json_extract(c.data, '$.aliases')) a),
  json_extract(c.data, '$.disambiguation')`;

// A dump stored again replaces the lines of its rowid range: the entries of its old lines that
// are the current version go first (while the old lines are still there to name them).
const DROP_DUMP = `DELETE FROM search_index WHERE rowid IN (
  SELECT c.id FROM changes c JOIN current_state s ON s.mbid = c.mbid AND s.change_id = c.id
  WHERE c.id BETWEEN ? AND ? AND s.status = 'CURRENT')`;

// Before the current-state upsert: the entries of the versions this dump's lines will replace
// (an older change id of the same MBID; ids grow with the packet within an entity type).
const DROP_SUPERSEDED = `DELETE FROM search_index WHERE rowid IN (
  SELECT s.change_id FROM changes c JOIN current_state s ON s.mbid = c.mbid
  WHERE c.id BETWEEN ? AND ? AND s.status = 'CURRENT' AND s.change_id < c.id)`;

// After the current-state upsert: the dump's lines that are now the current version of a CURRENT
// entity, in rowid order (FTS5 appends in order; out of order it flushes a segment per row).
// OR REPLACE: a dump stored again writes the same rowids.
const INDEX_DUMP = `INSERT OR REPLACE INTO search_index (rowid, name, sort_name, aliases, disambiguation)
  SELECT ${INDEX_COLUMNS} FROM changes c JOIN current_state s ON s.mbid = c.mbid
  WHERE c.id BETWEEN ? AND ? AND s.change_id = c.id AND s.status = 'CURRENT' ORDER BY c.id`;

// The entities a replication packet deleted or merged away leave the index (a removal older than
// the current version leaves the entity CURRENT, and indexed).
const DROP_REMOVED = `DELETE FROM search_index WHERE rowid IN (
  SELECT s.change_id FROM removals r JOIN current_state s ON s.mbid = r.mbid
  WHERE r.packet = ? AND s.status <> 'CURRENT' AND s.change_id IS NOT NULL)`;

/**
 * Keeps the search index for one JSON dump, whose changes are the rowid range [first, last]
 * (db/keys.ts, dumpIdRange). Call, inside the dump's transaction: {@link dropDump} before its old
 * lines are deleted, {@link dropSuperseded} after its lines are written and before the current-state
 * upsert, {@link indexDump} right after that upsert. Each is one set-based statement over the range.
 */
export class SearchIndexWriter {
  private readonly dropDumpStatement: Statement<[number, number]>;
  private readonly dropSupersededStatement: Statement<[number, number]>;
  private readonly indexStatement: Statement<[number, number]>;

  constructor(db: Database) {
    this.dropDumpStatement = db.prepare(DROP_DUMP);
    this.dropSupersededStatement = db.prepare(DROP_SUPERSEDED);
    this.indexStatement = db.prepare(INDEX_DUMP);
  }

  /** Removes the entries of an earlier copy of this dump (nothing for a dump stored the first time). */
  dropDump(first: number, last: number): void {
    this.dropDumpStatement.run(first, last);
  }

  /** Removes the entries of the versions the dump's lines are about to replace in the current state. */
  dropSuperseded(first: number, last: number): void {
    this.dropSupersededStatement.run(first, last);
  }

  /** Indexes the dump's lines that the current state now holds as CURRENT versions. */
  indexDump(first: number, last: number): void {
    this.indexStatement.run(first, last);
  }
}

/**
 * Removes from the search index the entities replication packet `packet` deleted or merged away
 * (its `removals`, already applied to the current state). Run in the packet's transaction.
 */
export function unindexRemovals(db: Database, packet: number): void {
  db.prepare(DROP_REMOVED).run(packet);
}

import type { Database, Statement } from 'better-sqlite3';
import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { newestChangeIdSql } from './currentQueries.js';
import { idPacketSql } from './keys.js';
import { foldSearchValue, SEARCH_FOLD_SQL } from './searchFold.js';
import { cachedStatement } from './statements.js';

/**
 * The search index (issue 15, Search): the FTS5 table `search_index` (drizzle/sqlite/0009_search_prefixes.sql),
 * contentless with `contentless_delete=1`. It holds one row per CURRENT entity of the current state
 * (db/currentQueries.ts), its rowid the entity's newest change id: an MBID's line is indexed when
 * it is the MBID's newest line (largest id in `changes_mbid`) and no removal of the same or a
 * later packet exists (`removals_mbid`; a removal wins over a JSON dump line of its packet).
 * Columns: `name` (the JSON dump line's `title` for recordings, releases, release groups and works,
 * `name` for the others), `sort_name` (`sort-name`), `aliases` (every alias's `name`, and its
 * `sort-name` when it differs) and `disambiguation`, folded as PostgreSQL's `unaccent` spells the
 * letters unicode61 keeps (db/searchFold.ts: Ø as O, ß as ss) and tokenized by unicode61 with
 * `remove_diacritics 2` (case and diacritics do not matter). The writers keep it in the same
 * transaction as the rows the current state is read from: per JSON dump {@link SearchIndexWriter},
 * per replication packet {@link RemovalIndexWriter}. Each step is set-based over the dump's id
 * range or the packet's removals. Keyed by change id, an entry never outlives its line; the
 * contentless table deletes by rowid alone, so the writers delete only rows they know are indexed.
 */

/** Entity types whose JSON dump lines name the entity in `title` (the others use `name`). */
export const TITLED_ENTITY_TYPES = ['recording', 'release', 'release-group', 'work'] as const;

/** True when the JSON dump lines of `entity` name the entity in `title` ({@link TITLED_ENTITY_TYPES}). */
export function isTitled(entity: EntityType): boolean {
  return (TITLED_ENTITY_TYPES as readonly string[]).includes(entity);
}

const TITLED = TITLED_ENTITY_TYPES.map((entity) => `'${entity}'`).join(', ');

/**
 * The columns of one index row after its rowid as the line holds them (not folded), from a
 * `changes` row `c` (columns `entity`, `data`); the migrations' fills (drizzle/sqlite/0008_search.sql,
 * 0009_search_prefixes.sql, 0012_search_fold.sql) repeat them, as a migration is plain SQL, and the
 * ingest reads the same values in JS (sync/searchFields.ts). The json_extract calls share SQLite's
 * JSON parse cache, so the line is parsed once per row; json_each reads the aliases from that
 * parse and runs only for lines that have aliases.
 */
const FIELDS = [
  `json_extract(c.data, iif(c.entity IN (${TITLED}), '$.title', '$.name'))`,
  `json_extract(c.data, '$."sort-name"')`,
  `iif(json_array_length(c.data, '$.aliases') > 0, (SELECT group_concat(iif(a.value ->> 'sort-name' IS a.value ->> 'name',
     a.value ->> 'name', concat_ws(' ', a.value ->> 'name', a.value ->> 'sort-name')), ' ')
     FROM json_each(json_extract(c.data, '$.aliases')) a WHERE a.type = 'object'), NULL)`,
  `json_extract(c.data, '$.disambiguation')`,
];

/** {@link FIELDS} as a column list: the text each store indexes, before SQLite's fold. */
export const FIELD_COLUMNS = FIELDS.join(',\n  ');

/**
 * One index row from a `changes` row `c`: the row's id, then {@link FIELDS} folded
 * ({@link SEARCH_FOLD_SQL}, registered on every connection by db/client.ts), as the ingest's
 * {@link SearchIndexWriter.stage} folds them in JS.
 */
export const INDEX_COLUMNS = `c.id, ${FIELDS.map((field) => `${SEARCH_FOLD_SQL}(${field})`).join(',\n  ')}`;

/** One index row's columns after its rowid: name, sort name, aliases, disambiguation. */
export type SearchFields = [
  name: string | null,
  sortName: string | null,
  aliases: string | null,
  disambiguation: string | null,
];

/** SQL condition: MBID `mbid` has no removal of packet `packet` or later (one seek in `removals_mbid`). */
const notRemovedSince = (mbid: string, packet: string) =>
  `NOT EXISTS (SELECT 1 FROM removals WHERE mbid = ${mbid} AND packet >= ${packet})`;

/** SQL: the id of the newest change of `mbid` before id `before` (the version a dump's line replaces). */
const previousChangeIdSql = (mbid: string, before: string) =>
  `(SELECT id FROM changes WHERE mbid = ${mbid} AND id < ${before} ORDER BY id DESC LIMIT 1)`;

// The dump's lines (range @first..@last) that are their MBID's newest line: the versions a dump
// adds to the current state, or (before its old copy is deleted) those it stored the last time.
const NEWEST_IN_DUMP = `c.id BETWEEN @first AND @last AND c.id = ${newestChangeIdSql('c.mbid')}`;

// The previous version of each newest line of relation `lines` (columns id, mbid), when it is
// indexed (not removed since its packet).
const previousIndexed = (lines: string, newest: string) => `SELECT p.id FROM (
    SELECT ${previousChangeIdSql('c.mbid', '@first')} AS id, c.mbid FROM ${lines} c WHERE ${newest}
  ) p WHERE p.id IS NOT NULL AND ${notRemovedSince('p.mbid', idPacketSql('p.id'))}`;
const PREVIOUS_INDEXED = previousIndexed('changes', NEWEST_IN_DUMP);

// The dump's newest lines that are indexed: no removal of the dump's packet or later.
const DUMP_INDEXED = `${NEWEST_IN_DUMP} AND ${notRemovedSince('c.mbid', '@packet')}`;

// The stage (a TEMP table: per connection, in the dump's transaction) holds the dump's lines'
// columns as the ingest read them, so indexing a dump reads neither the lines nor their JSON again.
const STAGE = 'search_stage';
const CREATE_STAGE = `CREATE TEMP TABLE IF NOT EXISTS ${STAGE} (id INTEGER PRIMARY KEY, mbid TEXT NOT NULL,
  name, sort_name, aliases, disambiguation)`;
const STAGED_NEWEST = `c.id = ${newestChangeIdSql('c.mbid')}`;
const STAGE_ROW = '(?, ?, ?, ?, ?, ?)';
/** Staged rows per multi-row INSERT. */
const STAGE_BATCH = 64;

// In rowid order: FTS5 appends in order; out of order it flushes a segment per row.
const INSERT = 'INSERT INTO search_index (rowid, name, sort_name, aliases, disambiguation)';
// The staged lines that `where` keeps (columns as the ingest read them), in rowid order.
const addStaged = (where: string) =>
  `${INSERT} SELECT c.id, c.name, c.sort_name, c.aliases, c.disambiguation FROM ${STAGE} c
   WHERE ${where} ORDER BY c.id`;
const insertWhere = (where: string) =>
  `${INSERT} SELECT ${INDEX_COLUMNS} FROM changes c WHERE ${where} ORDER BY c.id`;
const deleteOf = (ids: string) => `DELETE FROM search_index WHERE rowid IN (${ids})`;

type Range = { first: number; last: number; packet: number };

// True when some MBID has more than one change: one ordered pass over `changes_mbid`, stopped at
// the first repeat (0.12–0.16 s for 1M lines, bench/RESULTS.md).
const HAS_REPEATED_MBID = 'SELECT EXISTS (SELECT 1 FROM changes GROUP BY mbid HAVING count(*) > 1)';

/**
 * Keeps the search index for one JSON dump of `packet`, whose changes are the rowid range
 * [first, last] (db/keys.ts, dumpIdRange), inside the dump's transaction:
 * {@link SearchIndexWriter.unindexOldCopy} before an earlier copy's lines are deleted;
 * {@link SearchIndexWriter.stage} (or {@link SearchIndexWriter.stageLine}) for each line as it is
 * written; {@link SearchIndexWriter.indexDump} once every line is. Between the first and the last,
 * the index is as if the dump had never been stored. A dump of an older packet stored late indexes
 * nothing: its lines are not their MBID's newest.
 */
export class SearchIndexWriter {
  private readonly statements: Record<
    'dropOld' | 'restorePrevious' | 'dropPrevious' | 'add',
    Statement<[Range]>
  > & { addUnique: Statement<[Range]>; hasRepeatedMbid: Statement };
  private readonly stageMany: Statement;
  private readonly stageOne: Statement;
  private readonly fieldsOfLine: Statement;
  private readonly clearStage: Statement;
  private readonly staged: unknown[] = [];

  /** `db` in a transaction; `entity`: the dump's entity type (which member names it). */
  constructor(
    store: Store,
    private readonly entity: string,
  ) {
    const db = store.sqlite;
    // Prepared once per connection (db/statements.ts): a sync stores a day's 264 JSON dumps, and
    // statements prepared per dump left their compiled multi-row INSERTs to the garbage collector
    // (peak RSS 216 -> 192 MB, bench/RESULTS.md).
    const prepared = (sql: string) => cachedStatement(store, sql);
    db.exec(CREATE_STAGE);
    this.statements = {
      dropOld: prepared(deleteOf(`SELECT c.id FROM changes c WHERE ${DUMP_INDEXED}`)),
      restorePrevious: prepared(insertWhere(`c.id IN (${PREVIOUS_INDEXED})`)),
      dropPrevious: prepared(deleteOf(previousIndexed(STAGE, STAGED_NEWEST))),
      add: prepared(addStaged(`${STAGED_NEWEST} AND ${notRemovedSince('c.mbid', '@packet')}`)),
      addUnique: prepared(addStaged(notRemovedSince('c.mbid', '@packet'))),
      hasRepeatedMbid: prepared(HAS_REPEATED_MBID).pluck(),
    };
    const insert = `INSERT INTO ${STAGE} (id, mbid, name, sort_name, aliases, disambiguation) VALUES `;
    this.stageMany = prepared(insert + Array.from({ length: STAGE_BATCH }, () => STAGE_ROW).join(', '));
    this.stageOne = prepared(insert + STAGE_ROW);
    // CAST: a BLOB would be read as SQLite's binary JSON, not as JSON text.
    const line = '(SELECT ? AS entity, CAST(? AS TEXT) AS data)';
    this.fieldsOfLine = prepared(`SELECT ${FIELD_COLUMNS} FROM ${line} c`).raw();
    this.clearStage = prepared(`DELETE FROM ${STAGE}`);
    this.clearStage.run();
  }

  /**
   * Stages line `id` of `mbid` with its columns as read by the ingest (sync/searchFields.ts), folded
   * here (db/searchFold.ts) rather than in SQL: a JS test per column costs less than a call from
   * SQLite into JS, and sync/searchFields.ts stays the text PostgreSQL's ingest stages too.
   */
  stage(id: number, mbid: string, fields: SearchFields): void {
    const staged = this.staged;
    staged.push(
      id,
      mbid,
      foldSearchValue(fields[0]),
      foldSearchValue(fields[1]),
      foldSearchValue(fields[2]),
      foldSearchValue(fields[3]),
    );
    if (staged.length === STAGE_BATCH * 6) {
      this.stageMany.run(staged);
      staged.length = 0;
    }
  }

  /** Stages line `id` of `mbid` (its JSON text) with its columns read by SQLite ({@link FIELD_COLUMNS}). */
  stageLine(id: number, mbid: string, json: string | Buffer): void {
    const fields = this.fieldsOfLine.get(this.entity, json) as SearchFields;
    this.stage(id, mbid, fields);
  }

  /**
   * Before an earlier copy of the dump is deleted: removes the entries of its lines and indexes
   * again the versions they had replaced (nothing for a dump stored the first time: an empty range).
   */
  unindexOldCopy(range: Range): void {
    this.statements.dropOld.run(range);
    this.statements.restorePrevious.run(range);
  }

  /**
   * After the dump's lines are written and staged: removes the entries of the versions they
   * replace and indexes the lines that are now the current version of an entity not removed.
   * Each staged line costs two seeks in `changes_mbid` (its newest version, the one it replaces),
   * in random order: 10 s of a 1M-line full dump's 44 s bootstrap (bench/RESULTS.md). For a
   * `bulk` load (a dump that outweighs the database, the MBID index just rebuilt), one ordered
   * pass over that index first asks whether any MBID has two changes; when none has, every staged
   * line is its MBID's newest and replaces nothing, so only the removal check is left.
   */
  indexDump(range: Range, options: { bulk?: boolean } = {}): void {
    const staged = this.staged;
    for (let i = 0; i < staged.length; i += 6) this.stageOne.run(staged.slice(i, i + 6));
    staged.length = 0;
    if (options.bulk && this.statements.hasRepeatedMbid.get() === 0) {
      this.statements.addUnique.run(range);
    } else {
      this.statements.dropPrevious.run(range);
      this.statements.add.run(range);
    }
    this.clearStage.run();
  }
}

// The MBIDs a replication packet removes whose newest line it removes from the current state: a
// line of the packet or earlier, not removed by another packet of the line's packet or later.
const REMOVED_BY_PACKET = `SELECT n.id FROM (
    SELECT ${newestChangeIdSql('r.mbid')} AS id, r.mbid FROM (SELECT DISTINCT mbid FROM removals WHERE packet = @packet) r
  ) n WHERE n.id IS NOT NULL AND ${idPacketSql('n.id')} <= @packet
  AND NOT EXISTS (SELECT 1 FROM removals WHERE mbid = n.mbid AND packet >= ${idPacketSql('n.id')} AND packet <> @packet)`;

/**
 * Keeps the search index for one replication packet, inside its transaction:
 * {@link RemovalIndexWriter.reindexOldRemovals} before an earlier copy's removals are deleted
 * (their entities are indexed again), {@link RemovalIndexWriter.applyRemovals} once the packet's
 * removals are derived (the entities it deletes or merges away leave the index). An entity that a
 * later JSON dump shows again is indexed by that dump ({@link SearchIndexWriter}).
 */
export class RemovalIndexWriter {
  private readonly restore: Statement<[{ packet: number }]>;
  private readonly drop: Statement<[{ packet: number }]>;

  constructor(db: Database) {
    this.restore = db.prepare(insertWhere(`c.id IN (${REMOVED_BY_PACKET})`));
    this.drop = db.prepare(deleteOf(REMOVED_BY_PACKET));
  }

  /** Indexes again the entities an earlier copy of `packet` removed (nothing the first time). */
  reindexOldRemovals(packet: number): void {
    this.restore.run({ packet });
  }

  /** Removes from the index the entities `packet`'s removals (already written) remove. */
  applyRemovals(packet: number): void {
    this.drop.run({ packet });
  }
}

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { changeId } from '../../src/db/keys.js';
import { FIELD_COLUMNS } from '../../src/db/searchIndex.js';
import { searchHits } from '../../src/db/searchQueries.js';
import { parseKeepFiles } from '../../src/files/retentionPolicy.js';
import { ingestJsonDump } from '../../src/sync/ingest.js';
import { pruneHistory } from '../../src/sync/prune.js';
import { writeJsonDump } from '../support/archives.js';
import { tempDir, testLogger } from '../support/harness.js';
import { rewindMigrations } from '../support/migrations.js';
import {
  buildSearchStory,
  currentIds,
  indexedIds,
  SEARCH,
  storeDump,
  storeRemovals,
} from '../support/searchFeed.js';

const line = (mbid: string, name: string) => JSON.stringify({ id: mbid, name, 'sort-name': name });
const ROYKSOPP = 'e3000000-0000-4000-8000-000000000001';
const LODZ = 'e3000000-0000-4000-8000-000000000002';

describe('the search index follows the current state in the writers’ transactions', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  const found = (words: string) =>
    searchHits(store, { phrases: words.split(' '), slots: null }, undefined, 100).map(
      (hit) => hit.change.mbid,
    );

  beforeEach(async () => {
    dir = await tempDir('lf-search-index-');
    store = openStore(join(dir.dir, 'livefeed.db'));
    await buildSearchStory(store, dir.dir);
  }, 60_000);
  afterEach(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('holds exactly the current version of every CURRENT entity', () => {
    const ids = indexedIds(store);
    expect(ids).toEqual(currentIds(store));
    expect(ids).toContain(changeId(11, 'artist', 1));
    expect(ids).not.toContain(changeId(10, 'artist', 5)); // the renamed artist's first version
    expect(ids).not.toContain(changeId(10, 'artist', 6)); // deleted
    expect(ids).not.toContain(changeId(10, 'artist', 7)); // merged
  });

  it('a JSON dump stored again replaces its entries; an older dump stored late changes nothing', async () => {
    await storeDump(store, dir.dir, 10, 'label', [line(SEARCH.label, 'Petite Boîte Records')]);
    await storeDump(store, dir.dir, 11, 'artist', [line(SEARCH.renamed, 'Third Moniker')]);
    expect(found('"records"')).toEqual([SEARCH.label]);
    expect(found('"grosse" "records"')).toEqual([]);
    expect(found('"moniker"')).toEqual([SEARCH.renamed]);
    expect(found('"new"')).toEqual([]);
    await storeDump(store, dir.dir, 9, 'artist', [line(SEARCH.grosse, 'Ancient Name')]);
    expect(found('"ancient"')).toEqual([]);
    expect(found('"grosse" "boite"')).toContain(SEARCH.grosse);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('a later JSON dump makes a deleted entity findable again, by its new line', async () => {
    expect(found('"doomed"')).toEqual([]);
    await storeDump(store, dir.dir, 13, 'artist', [line(SEARCH.deleted, 'Doomed Returns')]);
    expect(found('"doomed"')).toEqual([SEARCH.deleted]);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('a JSON dump stored again without an MBID gives the index back the version its old copy replaced', async () => {
    await storeDump(store, dir.dir, 11, 'artist', [line(SEARCH.byName, 'Lumière Later')]);
    expect(found('"old" "moniker"')).toEqual([SEARCH.renamed]);
    expect(found('"new"')).toEqual([]);
    expect(found('"lumiere" "later"')).toEqual([SEARCH.byName]);
    // Stored again without the deleted one's return: the removal still holds it out of the index.
    await storeDump(store, dir.dir, 13, 'artist', [line(SEARCH.deleted, 'Doomed Returns')]);
    await storeDump(store, dir.dir, 13, 'artist', [line(SEARCH.byName, 'Lumière Latest')]);
    expect(found('"doomed"')).toEqual([]);
    expect(found('"later"')).toEqual([]);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('a removal wins over a JSON dump line of its packet, in either order; an older removal stored late does not', async () => {
    await storeDump(store, dir.dir, 13, 'artist', [line(SEARCH.byName, 'Lumière Thirteen')]);
    await storeRemovals(store, dir.dir, 13, { deleted: [SEARCH.byName, SEARCH.byAlias] });
    await storeDump(store, dir.dir, 13, 'label', [line(SEARCH.label, 'Thirteen Label')]);
    await storeRemovals(store, dir.dir, 9, { deleted: [SEARCH.label, SEARCH.byDisambiguation] });
    expect(found('"lumiere"')).toEqual([SEARCH.byDisambiguation]);
    expect(found('"thirteen"')).toEqual([SEARCH.label]);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('a replication packet stored again with other removals gives back the entities it no longer removes', async () => {
    await storeRemovals(store, dir.dir, 12, { deleted: [SEARCH.deleted], merged: [SEARCH.merged] });
    expect(indexedIds(store)).toEqual(currentIds(store));
    await storeRemovals(store, dir.dir, 12, { deleted: [SEARCH.byName] });
    expect(found('"doomed"')).toEqual([SEARCH.deleted]);
    expect(found('"absorbed"')).toEqual([SEARCH.merged]);
    expect(found('"lumiere"')).not.toContain(SEARCH.byName);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('indexes a line whose members the ingest leaves to SQLite (a number as the name) like any other', async () => {
    const numbered = JSON.stringify({
      id: SEARCH.byAlias,
      name: 1999,
      aliases: [{ name: 'Prince Year', 'sort-name': 7 }],
    });
    await storeDump(store, dir.dir, 13, 'artist', [numbered]);
    expect(found('"1999"')).toEqual([SEARCH.byAlias]);
    expect(found('"prince" "year" "7"')).toEqual([SEARCH.byAlias]);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('indexes lines the ingest stores re-escaped (a raw carriage return), and aliases that are not objects do not fail a dump', async () => {
    const raw = `{"id":"${SEARCH.byName}","name":"Carriage\rReturn Band","sort-name":"Band","aliases":[{"name":"Zeilen\rUmbruch"}]}`;
    // An alias that is not an object is left out instead of failing the dump.
    const odd = JSON.stringify({
      id: SEARCH.byAlias,
      name: 'Odd Aliases',
      aliases: ['a string', { name: 'Real One' }],
    });
    await storeDump(store, dir.dir, 13, 'artist', [raw, odd]);
    expect(found('"real" "one"')).toEqual([SEARCH.byAlias]);
    expect(found('"string"')).toEqual([]);
    expect(found('"carriage"')).toEqual([SEARCH.byName]);
    expect(found('"umbruch"')).toEqual([SEARCH.byName]);
    expect(found('"lumiere"')).not.toContain(SEARCH.byName);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('a dump that fails after its index statements leaves the index as it was (one transaction)', async () => {
    const before = indexedIds(store);
    const built = await writeJsonDump(join(dir.dir, 'failing'), {
      packet: 15,
      entity: 'artist',
      lines: [line(SEARCH.grosse, 'Never Seen'), line(SEARCH.byName, 'Never Either')],
    });
    const failing = ingestJsonDump(store, {
      packet: 15,
      entity: 'artist',
      archivePath: built.path,
      file: null,
      beforeCommit: () => {
        throw new Error('the archive could not be moved into place');
      },
    });
    await expect(failing).rejects.toThrow('could not be moved');
    expect(indexedIds(store)).toEqual(before);
    expect(found('"never"')).toEqual([]);
    expect(found('"lumiere"')).toContain(SEARCH.byName);
  });

  it('pruning history keeps the index whole', async () => {
    await storeDump(store, dir.dir, 13, 'artist', [line(SEARCH.byName, 'Lumière Again')]);
    const before = indexedIds(store);
    const result = await pruneHistory(
      store,
      parseKeepFiles('1'),
      new Date('2026-05-12T00:00:00Z'),
      testLogger(),
    );
    expect(result.changes).toBeGreaterThan(0);
    expect(indexedIds(store)).toEqual(before);
    expect(indexedIds(store)).toEqual(currentIds(store));
    expect(found('"grosse" "boite"').sort()).toEqual([SEARCH.grosse, SEARCH.label, SEARCH.recording].sort());
    expect(found('"lumiere" "again"')).toEqual([SEARCH.byName]);
    const check = store.sqlite.prepare("INSERT INTO search_index(search_index) VALUES ('integrity-check')");
    expect(() => check.run()).not.toThrow();
  });

  it('every writer path folds (db/searchFold.ts): the JS columns, SQLite’s read of a line, a restore', async () => {
    // Łódź's disambiguation is a number: the ingest has SQLite read that line (stageLine).
    await storeDump(store, dir.dir, 14, 'artist', [
      line(ROYKSOPP, 'Røyksopp'),
      JSON.stringify({ id: LODZ, name: 'Łódź', disambiguation: 7 }),
    ]);
    expect(found('"royksopp"')).toEqual([ROYKSOPP]);
    expect(found('"lodz"')).toEqual([LODZ]);
    await storeDump(store, dir.dir, 15, 'artist', [line(ROYKSOPP, 'Renamed')]);
    expect(found('"royksopp"')).toEqual([]);
    // Stored again without it: the version it replaced is indexed again by SQL (INDEX_COLUMNS).
    await storeDump(store, dir.dir, 15, 'artist', [line(SEARCH.byName, 'Lumière')]);
    expect(found('"royksopp"')).toEqual([ROYKSOPP]);
    expect(indexedIds(store)).toEqual(currentIds(store));
  });

  it('the fold migration folds an index made before it: "royksopp" finds "Røyksopp"', async () => {
    await storeDump(store, dir.dir, 14, 'artist', [line(ROYKSOPP, 'Røyksopp')]);
    const path = store.path;
    const expected = indexedIds(store);
    store.close();
    // Back to the index as the writers made it before drizzle/sqlite/0012: columns not folded.
    const old = new Database(path);
    old.exec(`INSERT INTO search_index (search_index) VALUES ('delete-all');
      INSERT INTO search_index (rowid, name, sort_name, aliases, disambiguation)
      SELECT c.id, ${FIELD_COLUMNS} FROM changes c WHERE c.id IN (${expected.join(', ')}) ORDER BY c.id`);
    const match = old.prepare('SELECT rowid FROM search_index WHERE search_index MATCH ?').pluck();
    expect(match.all('"royksopp"')).toEqual([]);
    expect(match.all('"røyksopp"')).toHaveLength(1);
    rewindMigrations(old, 'search_fold');
    old.close();
    store = openStore(path);
    expect(indexedIds(store)).toEqual(expected);
    expect(found('"royksopp"')).toEqual([ROYKSOPP]);
    expect(found('"royk"*')).toEqual([ROYKSOPP]);
    expect(found('"grosse" "boite"').sort()).toEqual([SEARCH.grosse, SEARCH.label, SEARCH.recording].sort());
    const check = store.sqlite.prepare("INSERT INTO search_index(search_index) VALUES ('integrity-check')");
    expect(() => check.run()).not.toThrow();
  });

  it('the migration fills the index of a database made before it', async () => {
    const path = store.path;
    const expected = indexedIds(store);
    store.close();
    // Back to the state before the migration: no index, the migration not recorded.
    const old = new Database(path);
    old.exec('DROP TABLE search_index');
    rewindMigrations(old, 'search');
    old.close();
    store = openStore(path);
    expect(indexedIds(store)).toEqual(expected);
    expect(found('"new" "moniker"')).toEqual([SEARCH.renamed]);
  });

  it('the prefix migration makes the index again with prefix indexes, holding the same entries', async () => {
    const path = store.path;
    const expected = indexedIds(store);
    store.close();
    // Back to the index as drizzle/sqlite/0008_search.sql made it (no prefix indexes), 0009 not recorded.
    const old = new Database(path);
    old.exec(`DROP TABLE search_index;
      CREATE VIRTUAL TABLE search_index USING fts5(name, sort_name, aliases, disambiguation,
        content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2')`);
    old.exec(
      `INSERT INTO search_index (rowid, name) VALUES ${expected.map((id) => `(${id}, 'stale')`).join(', ')}`,
    );
    rewindMigrations(old, 'search_prefixes');
    old.close();
    store = openStore(path);
    const sql = store.sqlite
      .prepare("SELECT sql FROM sqlite_master WHERE name = 'search_index'")
      .pluck()
      .get();
    expect(sql).toContain("prefix = '1 2 3 4'");
    expect(indexedIds(store)).toEqual(expected);
    expect(found('"stale"')).toEqual([]);
    expect(found('"new" "mon"*')).toEqual([SEARCH.renamed]);
    expect(found('"l"*').sort()).toEqual([SEARCH.byName, SEARCH.byAlias, SEARCH.byDisambiguation].sort());
    const check = store.sqlite.prepare("INSERT INTO search_index(search_index) VALUES ('integrity-check')");
    expect(() => check.run()).not.toThrow();
  });
});

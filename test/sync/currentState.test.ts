import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { currentCounts, currentOfMbid, currentOfMbids } from '../../src/db/currentQueries.js';
import { changeId } from '../../src/db/keys.js';
import { buildCurrentStateHistory, FILLER, MBID } from '../support/currentStateFeed.js';
import { tempDir } from '../support/harness.js';
import { rewindMigrations } from '../support/migrations.js';

type StateRow = {
  mbid: string;
  status: string;
  packet: number;
  change_id: number | null;
  merged_into: string | null;
};

describe('current state, kept by the JSON dump and replication packet writers', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  const stateRow = (row: NonNullable<ReturnType<typeof currentOfMbid>>): StateRow => ({
    mbid: row.mbid,
    status: row.status,
    packet: row.packet,
    change_id: row.latest?.id ?? null,
    merged_into: row.mergedInto,
  });
  const state = (mbid: string) => stateRow(currentOfMbid(store, mbid)!);
  // Every MBID a change or a removal names, with its current state.
  const allState = () => {
    const mbids = store.sqlite
      .prepare('SELECT mbid FROM changes UNION SELECT mbid FROM removals ORDER BY mbid')
      .pluck()
      .all() as string[];
    return currentOfMbids(store, mbids).map((row) => row && stateRow(row));
  };

  beforeAll(async () => {
    dir = await tempDir('lf-current-');
    store = openStore(join(dir.dir, 'livefeed.db'));
    await buildCurrentStateHistory(store, dir.dir);
  }, 60_000);
  afterAll(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('holds each MBID once, read from its newest change row (the line is stored once, nothing repeats it)', () => {
    const distinct = store.sqlite.prepare('SELECT count(DISTINCT mbid) FROM changes').pluck().get();
    expect(distinct).toBe(9 + FILLER);
    // The merge target no JSON dump held is not an entity of the current state by itself.
    expect(currentCounts(store)).toEqual({ CURRENT: 3 + FILLER, DELETED: 2, MERGED: 4 });
    expect(currentOfMbid(store, MBID.notInDumps)).toBeUndefined();
    expect(currentOfMbid(store, MBID.unknown)).toBeUndefined();
    const tables = store.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables).not.toContain('current_state');
    // One statement answers many MBIDs in the order asked, duplicates and unknowns included.
    const many = currentOfMbids(store, [MBID.middle, MBID.unknown, MBID.replaced, MBID.middle]);
    expect(many.map((row) => row?.status)).toEqual(['MERGED', undefined, 'CURRENT', 'MERGED']);
  });

  it('a newer JSON dump line replaces the version', () => {
    expect(state(MBID.replaced)).toEqual({
      mbid: MBID.replaced,
      status: 'CURRENT',
      packet: 11,
      change_id: changeId(11, 'artist', 1),
      merged_into: null,
    });
    const latest = currentOfMbid(store, MBID.replaced)!.latest!;
    expect(JSON.parse(latest.data.toString('utf8'))).toMatchObject({ id: MBID.replaced, name: 'second' });
    expect(latest).toMatchObject({ packet: 11, position: 1, entity: 'artist' });
  });

  it('a deletion marks the MBID deleted and keeps its last version', () => {
    expect(state(MBID.deletedTarget)).toMatchObject({ status: 'DELETED', packet: 13 });
    expect(currentOfMbid(store, MBID.deletedTarget)!.latest!.packet).toBe(10);
  });

  it('a merge marks the MBID merged with its target', () => {
    expect(state(MBID.chainStart)).toMatchObject({ status: 'MERGED', packet: 12, merged_into: MBID.middle });
    expect(state(MBID.middle)).toMatchObject({ status: 'MERGED', packet: 13, merged_into: MBID.chainEnd });
    expect(state(MBID.mergedIntoUnheld)).toMatchObject({ merged_into: MBID.notInDumps });
  });

  it('a JSON dump of a later packet makes a deleted MBID current again', () => {
    expect(state(MBID.reappeared)).toEqual({
      mbid: MBID.reappeared,
      status: 'CURRENT',
      packet: 14,
      change_id: changeId(14, 'artist', 1),
      merged_into: null,
    });
  });

  it('a JSON dump of an earlier packet stored after the deletion leaves it deleted, with that newer line', () => {
    expect(state(MBID.deletedDespiteOlderDump)).toMatchObject({
      status: 'DELETED',
      packet: 12,
      change_id: changeId(11, 'artist', 2),
    });
  });

  it('storing a dump or packet again changes nothing', async () => {
    const before = allState();
    await buildCurrentStateHistory(store, join(dir.dir, 'again'));
    expect(allState()).toEqual(before);
  });

  it('the migration drops the current_state table of a database made by an earlier version; the state stays', () => {
    const before = allState();
    const path = store.path;
    store.close();
    const old = openStore(path);
    // What a version at migration 0005 left: its current_state table (rows derived from changes and
    // removals), none of the tables and indexes of later migrations, and no record of them.
    old.sqlite.exec(
      'DROP INDEX packets_synced_at; DROP INDEX removals_entity; DROP INDEX replication_packets_status; ' +
        'DROP INDEX dumps_status; CREATE INDEX dumps_status ON dumps (status); DROP INDEX removals_mbid; CREATE INDEX removals_mbid ON removals (mbid)',
    );
    old.sqlite.exec(
      'CREATE TABLE current_state (mbid text PRIMARY KEY NOT NULL, entity text NOT NULL, status text NOT NULL, ' +
        'change_id integer, packet integer NOT NULL, merged_into text) WITHOUT ROWID',
    );
    old.sqlite.exec(
      "INSERT INTO current_state SELECT mbid, entity, 'CURRENT', max(id), packet, NULL FROM changes GROUP BY mbid",
    );
    // Nor the search index made after it, nor the removals counter.
    old.sqlite.exec('DROP TABLE search_index');
    old.sqlite.exec(
      'DROP TRIGGER removals_version_insert; DROP TRIGGER removals_version_delete; ' +
        "DROP TRIGGER removals_version_update; DELETE FROM meta WHERE key = 'removals_version'",
    );
    rewindMigrations(old.sqlite, 'current_state_from_indexes');
    old.close();
    store = openStore(path);
    expect(
      store.sqlite.prepare("SELECT name FROM sqlite_master WHERE name = 'current_state'").get(),
    ).toBeUndefined();
    expect(allState()).toEqual(before);
  });
});

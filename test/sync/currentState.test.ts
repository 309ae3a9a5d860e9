import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { currentCounts, currentOfMbid } from '../../src/db/currentQueries.js';
import { changeId } from '../../src/db/keys.js';
import { buildCurrentStateHistory, FILLER, MBID } from '../support/currentStateFeed.js';
import { tempDir } from '../support/harness.js';
import { migrationTime } from '../support/migrations.js';

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
  const state = (mbid: string) =>
    store.sqlite
      .prepare('SELECT mbid, status, packet, change_id, merged_into FROM current_state WHERE mbid = ?')
      .get(mbid) as StateRow;
  const allState = () =>
    store.sqlite.prepare('SELECT * FROM current_state ORDER BY mbid').all() as Record<string, unknown>[];

  beforeAll(async () => {
    dir = await tempDir('lf-current-');
    store = openStore(join(dir.dir, 'livefeed.db'));
    await buildCurrentStateHistory(store, dir.dir);
  }, 60_000);
  afterAll(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('holds each MBID once, pointing at its newest change row (the line itself is not copied)', () => {
    const distinct = store.sqlite.prepare('SELECT count(DISTINCT mbid) FROM changes').pluck().get();
    expect(distinct).toBe(9 + FILLER);
    // The merge target no JSON dump held is not an entity of the current state by itself.
    expect(store.sqlite.prepare('SELECT count(*) FROM current_state').pluck().get()).toBe(9 + FILLER);
    const columns = store.sqlite.prepare("SELECT name FROM pragma_table_info('current_state')").pluck().all();
    expect(columns).not.toContain('data');
    expect(currentCounts(store)).toEqual({ CURRENT: 3 + FILLER, DELETED: 2, MERGED: 4 });
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

  it('the migration fills the current state of a database made by an earlier version', () => {
    const before = allState();
    const path = store.path;
    store.close();
    const old = openStore(path);
    // What an earlier version left: no current_state table (nor the search index made after it)
    // and no record of their migrations.
    old.sqlite.exec('DROP TABLE current_state');
    old.sqlite.exec('DROP TABLE search_index');
    old.sqlite
      .prepare('DELETE FROM __drizzle_migrations WHERE created_at >= ?')
      .run(migrationTime('current_state'));
    old.close();
    store = openStore(path);
    expect(allState()).toEqual(before);
    const withoutRowid = store.sqlite
      .prepare("SELECT sql FROM sqlite_master WHERE name = 'current_state'")
      .pluck()
      .get();
    expect(withoutRowid).toMatch(/WITHOUT ROWID/);
  });
});

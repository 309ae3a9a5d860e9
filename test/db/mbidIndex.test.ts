import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { currentOfMbid } from '../../src/db/currentQueries.js';
import { suspendMbidIndex } from '../../src/db/mbidIndex.js';
import { searchHits } from '../../src/db/searchQueries.js';
import { ingestJsonDump } from '../../src/sync/ingest.js';
import { writeJsonDump } from '../support/archives.js';
import { tempDir } from '../support/harness.js';
import { currentIds, indexedIds } from '../support/searchFeed.js';

const indexSql = (store: Store) =>
  store.sqlite.prepare("SELECT sql FROM sqlite_master WHERE name = 'changes_mbid'").pluck().get();

describe('a bulk load builds the MBID index once, after its lines', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  beforeEach(async () => {
    dir = await tempDir('lf-mbid-index-');
    store = openStore(join(dir.dir, 'livefeed.db'));
  });
  afterEach(async () => {
    store.close();
    await dir.cleanup();
  });

  const mbids = Array.from({ length: 300 }, () => randomUUID());
  const line = (mbid: string, i: number, name: string) => JSON.stringify({ id: mbid, name: `${name} ${i}` });
  async function load(packet: number, name: string, bulk: boolean, extra: string[] = []) {
    const built = await writeJsonDump(join(dir.dir, `dump-${packet}-${name}`), {
      packet,
      entity: 'artist',
      lines: [...mbids.map((mbid, i) => line(mbid, i, name)), ...extra],
    });
    return ingestJsonDump(store, { packet, entity: 'artist', archivePath: built.path, file: null, bulk });
  }

  it('gives the same index definition, current state and search index as a load without it', async () => {
    const before = indexSql(store);
    await load(10, 'Bulk', true);
    expect(indexSql(store)).toBe(before);
    await load(11, 'Later', false);
    for (const [i, mbid] of mbids.entries()) {
      expect(currentOfMbid(store, mbid)?.latest?.packet).toBe(11);
      if (i % 50 === 0)
        expect(JSON.parse(currentOfMbid(store, mbid)!.latest!.data.toString()).name).toBe(`Later ${i}`);
    }
    expect(indexedIds(store)).toEqual(currentIds(store));
    expect(
      searchHits(store, { phrases: ['"later"'], slots: null }, undefined, 500, { commonAbove: 1000 }),
    ).toHaveLength(300);
    // The planner uses the rebuilt index for the current state's seeks.
    const plan = store.sqlite
      .prepare(`EXPLAIN QUERY PLAN SELECT id FROM changes WHERE mbid = ? ORDER BY id DESC LIMIT 1`)
      .all(mbids[0]) as { detail: string }[];
    expect(plan.map((p) => p.detail).join(' ')).toContain('changes_mbid');
  });

  it('a bulk load that fails leaves the table and its index as they were (one transaction)', async () => {
    await load(10, 'First', false);
    const signal = AbortSignal.abort(new Error('stopped'));
    const built = await writeJsonDump(join(dir.dir, 'dump-aborted'), {
      packet: 12,
      entity: 'artist',
      lines: mbids.map((mbid, i) => line(mbid, i, 'Aborted')),
    });
    await expect(
      ingestJsonDump(store, {
        packet: 12,
        entity: 'artist',
        archivePath: built.path,
        file: null,
        bulk: true,
        signal,
      }),
    ).rejects.toThrow();
    expect(indexSql(store)).toContain('changes_mbid');
    expect(currentOfMbid(store, mbids[7]!)?.latest?.packet).toBe(10);
    expect(store.sqlite.prepare('SELECT count(*) FROM changes').pluck().get()).toBe(300);
  });

  it('suspendMbidIndex drops the index inside the transaction: a rollback brings it back; a second drop is an error', () => {
    const before = indexSql(store);
    store.sqlite.exec('BEGIN');
    suspendMbidIndex(store.sqlite);
    expect(indexSql(store)).toBeUndefined();
    store.sqlite.exec('ROLLBACK');
    expect(indexSql(store)).toBe(before);
    store.sqlite.exec('BEGIN');
    suspendMbidIndex(store.sqlite);
    expect(() => suspendMbidIndex(store.sqlite)).toThrow('no index changes_mbid');
    store.sqlite.exec('ROLLBACK');
  });
});

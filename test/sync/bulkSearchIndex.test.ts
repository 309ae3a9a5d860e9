import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { changeId } from '../../src/db/keys.js';
import type { EntityType } from '../../src/feed/entities.js';
import { ingestJsonDump } from '../../src/sync/ingest.js';
import { writeJsonDump } from '../support/archives.js';
import { tempDir } from '../support/harness.js';
import { currentIds, indexedIds, SEARCH, storeRemovals } from '../support/searchFeed.js';

/**
 * The search index of a bulk load (db/searchIndex.ts, `indexDump` with `bulk`): with no MBID held
 * twice it skips the per-line seeks of the general statements; it must hold exactly what they
 * would, the current version of every CURRENT entity, and fall back to them when an MBID repeats.
 * Each case runs twice, bulk and not, on real archives and SQLite files, and both must agree.
 */

const line = (mbid: string, name: string) => JSON.stringify({ id: mbid, name, 'sort-name': name });
const filler = (n: number) => `c1000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const fillers = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => line(filler(from + i), `Filler ${from + i}`));

describe('a bulk load’s search index equals the general path’s', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let dumps = 0;
  beforeEach(async () => {
    dir = await tempDir('lf-bulk-search-');
  });
  afterEach(async () => {
    await dir?.cleanup();
  });

  /** Stores `lines` as the `entity` JSON dump of `packet`, bulk or not. */
  async function store(db: Store, packet: number, entity: EntityType, lines: string[], bulk: boolean) {
    const built = await writeJsonDump(join(dir.dir, `dump-${++dumps}`), { packet, entity, lines });
    await ingestJsonDump(db, { packet, entity, archivePath: built.path, file: null, bulk });
  }

  /** Runs `steps` on a new database, once with bulk dumps and once without; returns both indexes. */
  async function twice(steps: (db: Store, bulk: boolean) => Promise<void>) {
    const indexes: number[][] = [];
    for (const bulk of [true, false]) {
      const db = openStore(join(dir.dir, `${bulk ? 'bulk' : 'plain'}.db`));
      try {
        await steps(db, bulk);
        const ids = indexedIds(db);
        expect(ids, bulk ? 'bulk' : 'plain').toEqual(currentIds(db));
        indexes.push(ids);
      } finally {
        db.close();
      }
    }
    expect(indexes[0]).toEqual(indexes[1]);
    return indexes[0]!;
  }

  it('every MBID once: every line indexed, except one a later replication packet deleted', async () => {
    const ids = await twice(async (db, bulk) => {
      await storeRemovals(db, dir.dir, 12, { deleted: [SEARCH.deleted] });
      await store(db, 10, 'artist', [...fillers(0, 40), line(SEARCH.deleted, 'Doomed Ensemble')], bulk);
      await store(db, 10, 'label', fillers(100, 5), bulk);
    });
    expect(ids).toHaveLength(45);
    expect(ids).not.toContain(changeId(10, 'artist', 41));
  });

  it('an MBID twice in the bulk dump: only its later line is indexed', async () => {
    const ids = await twice(async (db, bulk) => {
      await store(
        db,
        10,
        'artist',
        [line(SEARCH.renamed, 'Old Moniker'), ...fillers(0, 20), line(SEARCH.renamed, 'New Moniker')],
        bulk,
      );
    });
    expect(ids).toContain(changeId(10, 'artist', 22));
    expect(ids).not.toContain(changeId(10, 'artist', 1));
    expect(ids).toHaveLength(21);
  });

  it('an MBID already held from an earlier dump: the bulk dump’s line replaces its entry; a dump of an older packet stored late does not', async () => {
    const ids = await twice(async (db, bulk) => {
      await store(db, 10, 'artist', [line(SEARCH.renamed, 'Old Moniker')], false);
      await store(db, 11, 'artist', [...fillers(0, 30), line(SEARCH.renamed, 'New Moniker')], bulk);
      await store(db, 9, 'artist', [line(filler(3), 'Ancient Filler')], bulk);
    });
    expect(ids).toContain(changeId(11, 'artist', 31));
    expect(ids).not.toContain(changeId(10, 'artist', 1));
    expect(ids).not.toContain(changeId(9, 'artist', 1));
    expect(ids).toContain(changeId(11, 'artist', 4));
  });
});

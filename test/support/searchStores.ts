import { join } from 'node:path';
import { openStore, type Store } from '../../src/db/client.js';
import type { PostgresStore } from '../../src/db/postgres/client.js';
import { reindexOldRemovals, unindexRemovals } from '../../src/db/postgres/searchIndex.js';
import type { EntityType } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import { ingestJsonDumpPostgres } from '../../src/sync/postgres/ingest.js';
import type { StoreUnderTest } from './readStores.js';
import { buildSearchStory, storeDump, storeRemovals } from './searchFeed.js';

/**
 * The search story (test/support/searchFeed.ts) on either store, from the same real archives. The
 * SQLite store (the target, or a twin for PostgreSQL) stores every archive through its writers.
 * PostgreSQL stores the JSON dumps through `ingestJsonDumpPostgres` and, as its replication packet
 * writer is not ported yet (docs/POSTGRES_PORT.md, step 2), gets the `removals` rows the SQLite
 * writer made of a packet, in one transaction with what that writer will call:
 * `reindexOldRemovals` before an earlier copy's rows are deleted, `unindexRemovals` after.
 */
export interface SearchStores {
  /** The SQLite store that holds the story: the target, or the twin of a PostgreSQL target. */
  twin: Store;
  /** Stores one more JSON dump on both (the twin, and the PostgreSQL target if any). */
  dump(packet: number, entity: EntityType, lines: string[]): Promise<void>;
  /** Stores replication packet `packet` (again) on both: it deletes `deleted`, merges `merged`. */
  removals(packet: number, removed: { deleted?: string[]; merged?: string[] }): Promise<void>;
}

let copies = 0;

/** Where searchFeed.ts `storeDump` wrote the archive of (packet, entity) under `dir`. */
const archiveOf = (dir: string, packet: number, entity: EntityType) =>
  join(dir, `dump-${packet}-${entity}`, ...jsonDumpPath(packet, entity).split('/'));

async function copyRemovals(twin: Store, pg: PostgresStore, packet: number): Promise<void> {
  const rows = twin.sqlite
    .prepare('SELECT mbid, entity, packet, kind, merged_into FROM removals WHERE packet = ?')
    .raw()
    .all(packet) as unknown[][];
  const client = await pg.pool.connect();
  try {
    await client.query('BEGIN');
    await reindexOldRemovals(client, packet);
    await client.query('DELETE FROM removals WHERE packet = $1', [packet]);
    for (const row of rows) {
      await client.query(
        'INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES ($1, $2, $3, $4, $5)',
        row,
      );
    }
    await unindexRemovals(client, packet);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

/** Fills `target` with the search story; the returned helpers add to it on both stores. */
export async function fillSearchStory(target: StoreUnderTest): Promise<SearchStores> {
  const twin = target.sqlite ?? openStore(join(target.dir, 'twin.sqlite'));
  const dir = join(target.dir, 'story');
  await buildSearchStory(twin, dir);
  const pg = target.postgres;
  const ingest = async (packet: number, entity: EntityType, path: string) => {
    await ingestJsonDumpPostgres(pg!, { packet, entity, archivePath: path, file: null });
  };
  if (pg) {
    // The story's order: the dumps of packet 10, packet 12's removals, the artist dump of packet 11.
    for (const entity of ['artist', 'label', 'recording'] as const)
      await ingest(10, entity, archiveOf(dir, 10, entity));
    await copyRemovals(twin, pg, 12);
    await ingest(11, 'artist', archiveOf(dir, 11, 'artist'));
  }
  return {
    twin,
    async dump(packet, entity, lines) {
      const copyDir = join(target.dir, `copy-${++copies}`);
      await storeDump(twin, copyDir, packet, entity, lines);
      if (pg) await ingest(packet, entity, archiveOf(copyDir, packet, entity));
    },
    async removals(packet, removed) {
      await storeRemovals(twin, join(target.dir, `packet-copy-${++copies}`), packet, removed);
      if (pg) await copyRemovals(twin, pg, packet);
    },
  };
}

/** Ids of the PostgreSQL search index, ascending. */
export async function indexedIdsPostgres(pg: PostgresStore): Promise<number[]> {
  const { rows } = await pg.pool.query<[number]>({
    text: 'SELECT id FROM search_index ORDER BY id',
    rowMode: 'array',
  });
  return rows.map(([id]) => id);
}

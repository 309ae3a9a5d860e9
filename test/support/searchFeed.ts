import { join } from 'node:path';
import type { Store } from '../../src/db/client.js';
import { currentOfMbid } from '../../src/db/currentQueries.js';
import type { EntityType } from '../../src/feed/entities.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { writeJsonDump } from './archives.js';
import { artistRow, type FixtureRow, gidRedirectRow, writeReplicationPacket } from './replicationArchives.js';
import { syncWriterOf } from './stores.js';

/** MBIDs of the {@link buildSearchStory} entities, by role. */
export const SEARCH = {
  /** Artist "Grosse Boîte", sort name "Boîte, Grosse". */
  grosse: 'b0000000-0000-4000-8000-000000000001',
  /** Label "Grosse Boîte Records". */
  label: 'b0000000-0000-4000-8000-000000000002',
  /** Recording titled "Grosse Boîte Song" (a `title`, not a `name`). */
  recording: 'b0000000-0000-4000-8000-000000000003',
  /** Artist named "Lumière". */
  byName: 'b0000000-0000-4000-8000-000000000004',
  /** Artist "Kind of Light", alias "Lumière Collective" (sort name "Collective, Lumiere"). */
  byAlias: 'b0000000-0000-4000-8000-000000000005',
  /** Artist "Quiet Band", disambiguation "lumiere tribute band". */
  byDisambiguation: 'b0000000-0000-4000-8000-000000000006',
  /** Artist "Old Moniker" in dump 10, "New Moniker" in dump 11. */
  renamed: 'b0000000-0000-4000-8000-000000000007',
  /** Artist "Doomed Ensemble", deleted by packet 12. */
  deleted: 'b0000000-0000-4000-8000-000000000008',
  /** Artist "Absorbed Ensemble", merged into `grosse` by packet 12. */
  merged: 'b0000000-0000-4000-8000-000000000009',
  /** Artist `Say "Hi" NEAR -minus * star`: FTS5 syntax characters as text. */
  syntax: 'b0000000-0000-4000-8000-000000000010',
} as const;

/** Filler artists "Paging Filler N" of dump 10, for paging. */
export const PAGING_FILLERS = 45;
export const pagingFiller = (n: number) => `f1000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const ROW_ID: Record<string, number> = Object.fromEntries(
  Object.values(SEARCH).map((gid, i) => [gid, i + 1]),
);

const line = (mbid: string, fields: Record<string, unknown>) => JSON.stringify({ id: mbid, ...fields });
const alias = (name: string, sortName: string) => ({
  name,
  'sort-name': sortName,
  locale: null,
  primary: null,
});

/** Writes and ingests one JSON dump of `entity` for `packet` through the real ingest of either store. */
export async function storeDump(
  store: Store | SyncStore,
  dir: string,
  packet: number,
  entity: EntityType,
  lines: string[],
) {
  const built = await writeJsonDump(join(dir, `dump-${packet}-${entity}`), { packet, entity, lines });
  return syncWriterOf(store).ingestDump({ packet, entity, archivePath: built.path, file: null });
}

let packetCopies = 0;

/**
 * Writes and stores, through the real writer of either store, replication packet `packet` that deletes the artists
 * `deleted` and merges the artists `merged` into `grosse` (MBIDs of {@link SEARCH}).
 */
export async function storeRemovals(
  store: Store | SyncStore,
  dir: string,
  packet: number,
  { deleted = [], merged = [] }: { deleted?: string[]; merged?: string[] },
): Promise<void> {
  const row = (gid: string) => artistRow({ id: ROW_ID[gid]!, gid, name: `Artist ${ROW_ID[gid]}` });
  const rows: FixtureRow[] = [
    ...deleted.map(
      (gid): FixtureRow => ({ xid: 1, table: 'musicbrainz.artist', op: 'd', oldData: row(gid) }),
    ),
    ...merged.flatMap((gid): FixtureRow[] => [
      { xid: 2, table: 'musicbrainz.artist_gid_redirect', op: 'i', newData: gidRedirectRow(gid, 1) },
      { xid: 2, table: 'musicbrainz.artist', op: 'd', oldData: row(gid) },
    ]),
  ];
  const root = join(dir, `packet-${packet}-${++packetCopies}`);
  const archive = await writeReplicationPacket(root, { packet, format: 'v2', rows });
  await syncWriterOf(store).replication.storeReplicationPacket(packet, archive, {});
}

/**
 * Stores, through the real writers and real archives: JSON dumps of packet 10 (artists, a label, a
 * recording), replication packet 12 (deletes `deleted`, merges `merged` into `grosse`), then the
 * artist JSON dump of packet 11 (`renamed` with its new name).
 */
export async function buildSearchStory(store: Store | SyncStore, dir: string): Promise<void> {
  const fillers = Array.from({ length: PAGING_FILLERS }, (_, i) =>
    line(pagingFiller(i), {
      name: `Paging Filler ${i}`,
      'sort-name': `Filler ${i}, Paging`,
      disambiguation: '',
    }),
  );
  await storeDump(store, dir, 10, 'artist', [
    line(SEARCH.grosse, {
      name: 'Grosse Boîte',
      'sort-name': 'Boîte, Grosse',
      disambiguation: '',
      aliases: [],
    }),
    line(SEARCH.byName, { name: 'Lumière', 'sort-name': 'Lumière', disambiguation: '' }),
    line(SEARCH.byAlias, {
      name: 'Kind of Light',
      'sort-name': 'Kind of Light',
      disambiguation: '',
      aliases: [alias('Lumière Collective', 'Collective, Lumiere')],
    }),
    line(SEARCH.byDisambiguation, {
      name: 'Quiet Band',
      'sort-name': 'Quiet Band',
      disambiguation: 'lumiere tribute band',
    }),
    line(SEARCH.renamed, { name: 'Old Moniker', 'sort-name': 'Old Moniker', disambiguation: '' }),
    line(SEARCH.deleted, { name: 'Doomed Ensemble', 'sort-name': 'Doomed Ensemble', disambiguation: '' }),
    line(SEARCH.merged, { name: 'Absorbed Ensemble', 'sort-name': 'Absorbed Ensemble', disambiguation: '' }),
    line(SEARCH.syntax, { name: 'Say "Hi" NEAR -minus * star', 'sort-name': 'Say Hi', disambiguation: '' }),
    ...fillers,
  ]);
  await storeDump(store, dir, 10, 'label', [
    line(SEARCH.label, {
      name: 'Grosse Boîte Records',
      'sort-name': 'Grosse Boîte Records',
      disambiguation: '',
    }),
  ]);
  await storeDump(store, dir, 10, 'recording', [
    line(SEARCH.recording, { title: 'Grosse Boîte Song', disambiguation: '', aliases: [] }),
  ]);
  await storeRemovals(store, dir, 12, { deleted: [SEARCH.deleted], merged: [SEARCH.merged] });
  await storeDump(store, dir, 11, 'artist', [
    line(SEARCH.renamed, { name: 'New Moniker', 'sort-name': 'New Moniker', disambiguation: '' }),
  ]);
}

/** Rowids of the search index, ascending. */
export function indexedIds(store: Store): number[] {
  return store.sqlite.prepare('SELECT rowid FROM search_index ORDER BY rowid').pluck().all() as number[];
}

/**
 * What the index must hold: the newest change id of every CURRENT entity (db/currentQueries.ts,
 * read one MBID at a time, independently of the index's own SQL), ascending.
 */
export function currentIds(store: Store): number[] {
  const mbids = store.sqlite
    .prepare('SELECT mbid FROM changes UNION SELECT mbid FROM removals')
    .pluck()
    .all() as string[];
  return mbids
    .map((mbid) => currentOfMbid(store, mbid))
    .flatMap((row) => (row?.status === 'CURRENT' ? [row.latest!.id] : []))
    .sort((a, b) => a - b);
}

/**
 * SQL: how many segments (b-trees) the FTS5 search index is in, counted from the rowids of its data
 * table: a page's rowid holds its segment id above bit 37 (fts5Int.h, FTS5_SEGMENT_ROWID), tombstone
 * pages add 1 << 16 to it, and rowids up to 10 are not pages. One column, `n`.
 */
export const SEARCH_SEGMENTS_SQL =
  'SELECT count(DISTINCT (id >> 37) & 65535) AS n FROM search_index_data WHERE id > 10';

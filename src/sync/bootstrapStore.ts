import {
  type BootstrapContinuation,
  type BootstrapPosition,
  bootstrappedPacket,
  markBootstrapped,
  recordBootstrapPosition,
} from '../db/bootstrapQueries.js';
import { isBulkLoad, withBulkJournal } from '../db/bulkJournal.js';
import type { Store } from '../db/client.js';
import type { FeedRewrite } from '../db/feedRewrites.js';
import { feedRewrites } from '../db/feedWindow.js';
import { mergeSearchIndex, type SearchMergeResult } from '../db/searchMerge.js';
import type { EntityType } from '../feed/entities.js';
import { type IngestJsonDumpOptions, type IngestResult, ingestJsonDump } from './ingest.js';

/** One full dump archive to import (sync/bootstrap.ts): the ingest's options and the archive's size. */
export interface FullDumpImport extends Omit<IngestJsonDumpOptions, 'bulk' | 'beforeCommit' | 'file'> {
  /** The full dump's directory name (`20260510-001`). */
  dump: string;
  /** Bytes of the compressed archive (SQLite decides on a bulk load by it). */
  archiveBytes: number;
}

/**
 * What `livefeed bootstrap` does to its database (issue 14 First import, issue 17), with two
 * implementations: SQLite ({@link sqliteBootstrapStore}) and PostgreSQL (sync/postgres/bootstrap.ts,
 * loaded only for a postgres:// database). The records are those of db/bootstrapQueries.ts.
 */
export interface BootstrapStore {
  /** The packet of `entity` of full dump `dump` when its import committed, else undefined. */
  bootstrappedPacket(dump: string, entity: EntityType): Promise<number | undefined>;
  /**
   * Imports one entity type's archive in ONE transaction that also records it as stored, so that a
   * killed run leaves the type whole or absent.
   * @throws the ingest's errors (ArchiveError, the abort reason, database errors); nothing is stored then.
   */
  importFullDump(options: FullDumpImport): Promise<IngestResult>;
  /**
   * Makes the full dumps' packet the sync position (complete; the latest-packet mark moved), and
   * records the packets between it and newer ones already held as incomplete, in one transaction.
   */
  recordBootstrapPosition(position: BootstrapPosition): Promise<BootstrapContinuation>;
  /**
   * After the imports: SQLite merges the search index into one segment, however long that takes
   * (db/searchMerge.ts; about 1 s for 1M entities), so that searches read one b-tree; undefined on
   * PostgreSQL, whose GIN index has no segments, and which analyzes the index there instead (its
   * size estimate sets the common-words threshold).
   * @throws database errors (the imports stay stored; the next sync pass merges again).
   */
  mergeSearchIndex(): Promise<SearchMergeResult | undefined>;
  /** The rewrites of the change stream recorded so far (db/feedRewrites.ts), for the command's warning. */
  feedRewrites(): Promise<readonly FeedRewrite[]>;
}

/**
 * The SQLite bootstrap store: a full dump is a bulk load into new pages, written once with a
 * rollback journal (db/bulkJournal.ts), and into a database holding less than it adds, with the
 * MBID index built after the lines (db/mbidIndex.ts).
 */
export function sqliteBootstrapStore(store: Store): BootstrapStore {
  return {
    bootstrappedPacket: async (dump, entity) => bootstrappedPacket(store, dump, entity),
    async importFullDump({ dump, archiveBytes, ...options }) {
      const { result } = await withBulkJournal(store, () =>
        ingestJsonDump(store, {
          ...options,
          file: null,
          bulk: isBulkLoad(store, archiveBytes),
          beforeCommit: () => markBootstrapped(store, dump, options.entity, options.packet),
        }),
      );
      return result;
    },
    recordBootstrapPosition: async (position) => recordBootstrapPosition(store, position),
    mergeSearchIndex: async () => mergeSearchIndex(store.sqlite),
    feedRewrites: async () => feedRewrites(store),
  };
}

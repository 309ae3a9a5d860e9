import { type Store, withoutBusyWait } from './client.js';

/**
 * Runs `work` (one or more whole transactions) with the database in rollback-journal mode
 * (`journal_mode = TRUNCATE`) when this connection is the only one open on it, then goes back to
 * WAL. For a bulk load into new pages (a full dump's import, `livefeed bootstrap`): in WAL mode
 * every page is written twice, once to the WAL at COMMIT and again into the database file by the
 * checkpoint (3.1 GB each way for a 1M-line full dump); a rollback journal keeps only the old
 * contents of the few pages that existed before, and the new ones are written once. A transaction
 * stays atomic (a killed process leaves a hot journal that the next connection rolls back, as
 * SQLite does on open), but readers in other processes wait for it: while it runs, the database
 * is closed to them. When another connection is open (a `serve` reading), the switch fails at once
 * and `work` runs in WAL mode as any write does. The temp database's cache is held to 2 MB meanwhile.
 * @returns what `work` returned, and whether the rollback journal was used.
 * @throws what `work` throws (the journal mode is set back to WAL first).
 */
export async function withBulkJournal<T>(
  store: Store,
  work: () => Promise<T>,
): Promise<{ result: T; rollbackJournal: boolean }> {
  const switched = setJournalMode(store, 'truncate') === 'truncate';
  // The search index's stage and the MBID index's sort go through the temp database, whose cache
  // every writer's connection bounds (db/client.ts TEMP_CACHE_BYTES).
  try {
    return { result: await work(), rollbackJournal: switched };
  } finally {
    // Another process may have tried to open the file meanwhile; the next open sets WAL anyway.
    if (switched) setJournalMode(store, 'wal');
  }
}

/** Sets the journal mode without waiting for other connections; returns the mode in force after. */
function setJournalMode(store: Store, mode: 'truncate' | 'wal'): string {
  return withoutBusyWait(store.sqlite, () => {
    try {
      return String(store.sqlite.pragma(`journal_mode = ${mode}`, { simple: true })).toLowerCase();
    } catch {
      // SQLITE_BUSY: another connection holds the file.
      return String(store.sqlite.pragma('journal_mode', { simple: true })).toLowerCase();
    }
  });
}

/** Uncompressed bytes per archive byte assumed for a JSON dump (xz of JSON lines: about 9.5). */
const XZ_RATIO = 8;

/**
 * True when a JSON dump archive of `archiveBytes` adds about as many bytes as the database holds
 * or more (a full dump into a new or small database): a bulk load, for which building the MBID
 * index again after the lines costs less than inserting into it (db/mbidIndex.ts).
 */
export function isBulkLoad(store: Store, archiveBytes: number): boolean {
  const pages = store.sqlite.pragma('page_count', { simple: true }) as number;
  const pageSize = store.sqlite.pragma('page_size', { simple: true }) as number;
  return archiveBytes * XZ_RATIO >= pages * pageSize;
}

import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Store } from '../db/client.js';
import { newestChangeIdSql } from '../db/currentQueries.js';
import { recordHistoryFrom } from '../db/historyQueries.js';
import { changeId } from '../db/keys.js';
import { oldestPacketAwaited } from '../db/webhookQueries.js';
import type { KeepFiles } from '../files/retentionPolicy.js';
import type { Logger } from '../logger.js';

/** `--keep-history`: the same values as `--keep-files` (all, a packet count, an age). */
export type KeepHistory = KeepFiles;

/** Rows one pruning transaction deletes at most: short write transactions, readers never wait long. */
const BATCH_ROWS = 2000;
/** Free pages one incremental vacuum step gives back. */
const VACUUM_PAGES = 512;

/** What {@link pruneHistory} removed. */
export interface PruneResult {
  /** Oldest packet whose changes are still held; undefined when nothing is stored or kept all. */
  historyFrom: number | undefined;
  changes: number;
  rowChanges: number;
  /** Pages returned to the file system by incremental vacuum. */
  freedPages: number;
}

/**
 * The first packet `keep` holds history for: packets below it are pruned. `packets`: the newest
 * stored packet − count + 1; `age`: the oldest packet whose TIMESTAMP is within the age (by packet
 * number, so an old packet stored late does not hold back the window). Undefined for `all` or an
 * empty database.
 */
export function historyCutoff(store: Store, keep: KeepHistory, now: Date): number | undefined {
  if (keep.kind === 'all') return undefined;
  const newest = store.sqlite.prepare('SELECT max(number) FROM packets').pluck().get() as number | null;
  if (newest === null) return undefined;
  if (keep.kind === 'packets') return newest - keep.count + 1;
  const since = new Date(now.getTime() - keep.maxAgeMs).toISOString();
  const first = store.sqlite
    .prepare('SELECT min(number) FROM packets WHERE timestamp >= ?')
    .pluck()
    .get(since) as number | null;
  return first ?? newest + 1;
}

/**
 * Prunes history older than the `keep` window (`--keep-history`): JSON dump changes of packets
 * below the cutoff, except each MBID's current version (its newest change), and the row
 * changes of replication packets below it; removals and the current state stay whole. Works in
 * transactions of at most {@link BATCH_ROWS} rows, yielding between them, so readers (WAL) and the
 * sync's own steps are never held up long, after recording `history_from`; then gives free pages back
 * with incremental vacuum (converting the file once, see {@link ensureIncrementalVacuum}).
 * @throws SQLite errors; what was deleted before stays deleted (every row deleted is outside the window).
 */
export async function pruneHistory(
  store: Store,
  keep: KeepHistory,
  now: Date,
  logger: Logger,
): Promise<PruneResult> {
  const cutoff = webhookHold(store, historyCutoff(store, keep, now), logger);
  const result: PruneResult = { historyFrom: cutoff, changes: 0, rowChanges: 0, freedPages: 0 };
  if (cutoff === undefined || cutoff <= 0) return result;
  ensureIncrementalVacuum(store, logger);
  // Recorded before the first row goes: from then on a change stream cursor before the cutoff gets
  // HISTORY_PRUNED, never a page read across rows that are half deleted (a silent gap).
  recordHistoryFrom(store, cutoff);
  result.changes = await pruneChanges(store, cutoff);
  result.rowChanges = await pruneRowChanges(store, cutoff);
  result.freedPages = await vacuumSteps(store);
  if (result.changes + result.rowChanges > 0) {
    logger.info(
      { event: 'history-pruned', ...result },
      `history before packet ${cutoff} pruned: ${result.changes} changes, ${result.rowChanges} row changes`,
    );
  }
  return result;
}

/** `cutoff`, or an older packet a webhook has not been sent yet: pruning never loses its events. */
function webhookHold(store: Store, cutoff: number | undefined, logger: Logger): number | undefined {
  const awaited = cutoff === undefined ? undefined : oldestPacketAwaited(store);
  if (cutoff === undefined || awaited === undefined || awaited >= cutoff) return cutoff;
  logger.info(
    { event: 'history-held', cutoff, heldFrom: awaited },
    `history from packet ${awaited} kept for webhooks not yet sent it (--keep-history alone would keep from ${cutoff})`,
  );
  return awaited;
}

async function pruneChanges(store: Store, cutoff: number): Promise<number> {
  // Ids pack the packet first (db/keys.ts): every change of a packet below the cutoff has a smaller id.
  const end = changeId(cutoff, 'area', 0);
  const page = store.sqlite.prepare(
    `SELECT c.id, c.id = ${newestChangeIdSql('c.mbid')} AS keep FROM changes c
     WHERE c.id > ? AND c.id < ? ORDER BY c.id LIMIT ${BATCH_ROWS}`,
  );
  const remove = store.sqlite.prepare('DELETE FROM changes WHERE id = ?');
  let after = -1;
  let deleted = 0;
  for (;;) {
    const rows = page.all(after, end) as { id: number; keep: number }[];
    if (rows.length === 0) return deleted;
    store.sqlite.transaction(() => {
      for (const row of rows) if (!row.keep) deleted += remove.run(row.id).changes;
    })();
    after = rows.at(-1)!.id;
    await yieldToLoop();
  }
}

async function pruneRowChanges(store: Store, cutoff: number): Promise<number> {
  const remove = store.sqlite.prepare(
    `DELETE FROM row_changes WHERE rowid IN (SELECT rowid FROM row_changes WHERE packet < ? LIMIT ${BATCH_ROWS})`,
  );
  let deleted = 0;
  for (;;) {
    const n = remove.run(cutoff).changes;
    deleted += n;
    if (n < BATCH_ROWS) return deleted;
    await yieldToLoop();
  }
}

/**
 * Makes the file use incremental vacuum (`auto_vacuum = INCREMENTAL`). New files get it when they
 * are created (db/client.ts); an older file needs one full VACUUM to switch, which rewrites the file
 * and takes a while on a large database: logged before it starts.
 */
export function ensureIncrementalVacuum(store: Store, logger: Logger): void {
  if (store.sqlite.pragma('auto_vacuum', { simple: true }) === 2) return;
  logger.warn(
    { event: 'vacuum-convert', db: store.path },
    'switching the database to incremental vacuum (--keep-history): one full VACUUM rewrites the file once',
  );
  store.sqlite.pragma('auto_vacuum = INCREMENTAL');
  store.sqlite.exec('VACUUM');
}

async function vacuumSteps(store: Store): Promise<number> {
  let freed = 0;
  for (;;) {
    const free = store.sqlite.pragma('freelist_count', { simple: true }) as number;
    if (free === 0) return freed;
    store.sqlite.pragma(`incremental_vacuum(${VACUUM_PAGES})`);
    freed += free - (store.sqlite.pragma('freelist_count', { simple: true }) as number);
    await yieldToLoop();
  }
}

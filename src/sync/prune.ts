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
export const BATCH_ROWS = 2000;
/** Free pages one incremental vacuum step gives back. */
const VACUUM_PAGES = 512;

/** What {@link pruneHistory} removed. */
export interface PruneResult {
  /** Oldest packet whose changes are still held; undefined when nothing is stored or kept all. */
  historyFrom: number | undefined;
  changes: number;
  rowChanges: number;
  /** Pages returned to the file system by incremental vacuum; 0 on PostgreSQL (autovacuum's work). */
  freedPages: number;
}

/**
 * (earliest TIMESTAMP held, ISO 8601) → the newest stored packet and the oldest whose TIMESTAMP is
 * at or after it. Written once for SQLite and PostgreSQL (sync/postgres/prune.ts); the packets
 * table holds one row per packet (thousands a year), so reading it whole costs nothing.
 */
export const HISTORY_WINDOW_SQL =
  'SELECT max(number) AS newest, min(number) FILTER (WHERE timestamp >= ?) AS first FROM packets';

/** The argument of {@link HISTORY_WINDOW_SQL}: the earliest TIMESTAMP `keep` holds (now for a count). */
export function keptSince(keep: KeepHistory, now: Date): string {
  const age = keep.kind === 'age' ? keep.maxAgeMs : 0;
  return new Date(now.getTime() - age).toISOString();
}

/** The cutoff of `keep` from the row of {@link HISTORY_WINDOW_SQL} (see {@link historyCutoff}). */
export function windowCutoff(
  keep: KeepHistory,
  window: { newest: number | null; first: number | null } | undefined,
): number | undefined {
  const newest = window?.newest ?? null;
  if (keep.kind === 'all' || newest === null) return undefined;
  if (keep.kind === 'packets') return newest - keep.count + 1;
  return window?.first ?? newest + 1;
}

/**
 * The first packet `keep` holds history for: packets below it are pruned. `packets`: the newest
 * stored packet − count + 1; `age`: the oldest packet whose TIMESTAMP is within the age (by packet
 * number, so an old packet stored late does not hold back the window). Undefined for `all` or an
 * empty database.
 */
export function historyCutoff(store: Store, keep: KeepHistory, now: Date): number | undefined {
  if (keep.kind === 'all') return undefined;
  const window = store.sqlite.prepare(HISTORY_WINDOW_SQL).get(keptSince(keep, now)) as
    | { newest: number | null; first: number | null }
    | undefined;
  return windowCutoff(keep, window);
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
  logPruned(result, cutoff, logger);
  return result;
}

/** Logs what a pruning removed (nothing when it removed nothing). Both stores. */
export function logPruned(result: PruneResult, cutoff: number, logger: Logger): void {
  if (result.changes + result.rowChanges === 0) return;
  logger.info(
    { event: 'history-pruned', ...result },
    `history before packet ${cutoff} pruned: ${result.changes} changes, ${result.rowChanges} row changes`,
  );
}

/** `cutoff`, or an older packet a webhook has not been sent yet: pruning never loses its events. */
function webhookHold(store: Store, cutoff: number | undefined, logger: Logger): number | undefined {
  return heldCutoff(cutoff, cutoff === undefined ? undefined : oldestPacketAwaited(store), logger);
}

/**
 * `cutoff`, or `awaited` (the oldest packet a webhook has not been sent yet) when older, logged:
 * pruning never loses a webhook's events. Both stores (sync/postgres/prune.ts).
 */
export function heldCutoff(
  cutoff: number | undefined,
  awaited: number | undefined,
  logger: Logger,
): number | undefined {
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

import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { RECORD_HISTORY_FROM_SQL } from '../../db/historyQueries.js';
import { changeId } from '../../db/keys.js';
import type { PostgresStore } from '../../db/postgres/client.js';
import { pgRow, pgRows } from '../../db/postgres/sql.js';
import { AWAITING_WEBHOOKS_SQL, oldestPacketAwaitedOf } from '../../db/webhookQueries.js';
import type { Logger } from '../../logger.js';
import {
  BATCH_ROWS,
  HISTORY_WINDOW_SQL,
  heldCutoff,
  type KeepHistory,
  keptSince,
  logPruned,
  type PruneResult,
  windowCutoff,
} from '../prune.js';
import { readRewritesPostgres } from './feedServed.js';

/**
 * `--keep-history` on PostgreSQL (issue 14 Bounded history, issue 17): sync/prune.ts's rule with the
 * same window, webhook hold and `history_from` record, each batch one autocommitted statement of at
 * most {@link BATCH_ROWS} rows. Readers never wait (MVCC: a reader keeps its snapshot); the space
 * of deleted rows is reused after autovacuum has passed, which runs by itself on a table whose
 * dead rows pass its threshold: no VACUUM of our own, which would only return the file's tail.
 */

// One page of the range ($1, $2) of change ids by id; its rows that are not their MBID's newest
// line are deleted in the same statement (its snapshot sees the page's rows, so the newest line is
// always known). `last` is the page's last id (null past the end) and where the next page starts.
const PRUNE_CHANGES_SQL = `WITH page AS (
    SELECT id, mbid FROM changes WHERE id > $1 AND id < $2 ORDER BY id LIMIT ${BATCH_ROWS}
  ), gone AS (
    DELETE FROM changes c USING page p
    WHERE c.id = p.id AND c.id <> (SELECT n.id FROM changes n WHERE n.mbid = p.mbid ORDER BY n.id DESC LIMIT 1)
    RETURNING c.id
  )
  SELECT (SELECT max(id) FROM page) AS last, (SELECT count(*) FROM gone) AS deleted`;

// Up to BATCH_ROWS row changes of packets below $1, by their primary key.
const PRUNE_ROW_CHANGES_SQL = `DELETE FROM row_changes WHERE (packet, ord) IN (
    SELECT packet, ord FROM row_changes WHERE packet < $1 ORDER BY packet, ord LIMIT ${BATCH_ROWS})`;

/** The first packet `keep` holds history for on `store` (sync/prune.ts historyCutoff). */
export async function historyCutoffPostgres(
  store: PostgresStore,
  keep: KeepHistory,
  now: Date,
): Promise<number | undefined> {
  if (keep.kind === 'all') return undefined;
  const window = await pgRow<{ newest: number | null; first: number | null }>(
    store.pool,
    HISTORY_WINDOW_SQL,
    [keptSince(keep, now)],
  );
  return windowCutoff(keep, window);
}

/**
 * Prunes history older than the `keep` window on PostgreSQL: the twin of sync/prune.ts
 * `pruneHistory` (JSON dump changes of packets below the cutoff but each MBID's current version,
 * and row changes of replication packets below it; removals, the current state and the search
 * index, which holds current versions only, stay whole). `history_from` is committed before the
 * first row goes. `freedPages` is 0: PostgreSQL's autovacuum reclaims the space.
 * @throws PostgreSQL errors; what was deleted before stays deleted (all of it outside the window).
 */
export async function pruneHistoryPostgres(
  store: PostgresStore,
  keep: KeepHistory,
  now: Date,
  logger: Logger,
): Promise<PruneResult> {
  const cutoff = await historyCutoffPostgres(store, keep, now);
  const awaited =
    cutoff === undefined
      ? undefined
      : oldestPacketAwaitedOf(
          await pgRows<{ cursor: string | null; retiredAt: string | null }>(
            store.pool,
            AWAITING_WEBHOOKS_SQL,
          ),
          await readRewritesPostgres(store.pool),
        );
  const held = heldCutoff(cutoff, awaited, logger);
  const result: PruneResult = { historyFrom: held, changes: 0, rowChanges: 0, freedPages: 0 };
  if (held === undefined || held <= 0) return result;
  // Committed before the first row goes: a change stream cursor before the cutoff then gets
  // HISTORY_PRUNED, never a page read across rows that are half deleted (a silent gap).
  await pgRows(store.pool, RECORD_HISTORY_FROM_SQL, [String(held)]);
  result.changes = await pruneChanges(store, held);
  result.rowChanges = await pruneRowChanges(store, held);
  logPruned(result, held, logger);
  return result;
}

async function pruneChanges(store: PostgresStore, cutoff: number): Promise<number> {
  // Ids pack the packet first (db/keys.ts): every change of a packet below the cutoff has a smaller id.
  const end = changeId(cutoff, 'area', 0);
  let after = -1;
  let deleted = 0;
  for (;;) {
    const { rows } = await store.pool.query<{ last: number | null; deleted: number }>(PRUNE_CHANGES_SQL, [
      after,
      end,
    ]);
    const page = rows[0]!;
    if (page.last === null) return deleted;
    deleted += page.deleted;
    after = page.last;
    await yieldToLoop();
  }
}

async function pruneRowChanges(store: PostgresStore, cutoff: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = (await store.pool.query(PRUNE_ROW_CHANGES_SQL, [cutoff])).rowCount ?? 0;
    deleted += n;
    if (n < BATCH_ROWS) return deleted;
    await yieldToLoop();
  }
}

/** The statements above, for a plan test. */
export const PRUNE_STATEMENTS = { PRUNE_CHANGES_SQL, PRUNE_ROW_CHANGES_SQL };

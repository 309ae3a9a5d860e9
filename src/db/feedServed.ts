import type { Store } from './client.js';
import {
  currentEpoch,
  REWRITES_KEY,
  rewritesText,
  SERVED_KEY,
  withJoinedRewrite,
  withRewrite,
} from './feedRewrites.js';
import { feedFrontier, feedRewrites } from './feedWindow.js';
import { LATEST_PACKET_SQL } from './latestPacket.js';
import { cachedStatement } from './statements.js';

/**
 * The writer's side of db/feedRewrites.ts on SQLite (sync/postgres/feedServed.ts on PostgreSQL):
 * the highest frontier served, and a rewrite for each store of events at or behind it. Both run
 * inside the writer's transaction, so a reader sees the events and their rewrite together.
 */

// Connections inside a transaction that holds several writes (a packet's, sync/packetTransaction.ts),
// with the epoch at its BEGIN: what they wrote since is uncommitted, never served, so a note then
// reads the stored value, and the rewrites of its writes share one epoch.
const holding = new WeakMap<Store['sqlite'], number>();

/**
 * Writer: a transaction that holds several writes has just begun on `store`'s connection. Notes
 * the frontier of the committed state now; until {@link endHoldingWrites}, notes take that value
 * instead of a frontier that the transaction's own uncommitted writes may have moved, and its
 * rewrites after the first join that one's epoch.
 */
export function beginHoldingWrites(store: Store): void {
  noteServedFrontier(store);
  holding.set(store.sqlite, currentEpoch(feedRewrites(store)));
}

/** Writer: the transaction of {@link beginHoldingWrites} committed or rolled back. */
export function endHoldingWrites(store: Store): void {
  holding.delete(store.sqlite);
}

/**
 * Notes the stream's frontier as served when it is the highest yet, and returns the highest
 * (undefined before any packet was served). Call before a write that may lower the frontier (a
 * packet stored below the first one held, a packet reopened, a bootstrap's gap), at the start of
 * its transaction: the frontier must be that of committed state, which readers may have seen.
 */
export function noteServedFrontier(store: Store): number | undefined {
  const stored = cachedStatement(store, LATEST_PACKET_SQL.readMeta).pluck().get(SERVED_KEY) as
    | string
    | undefined;
  const served = stored === undefined ? undefined : Number(stored);
  if (holding.has(store.sqlite)) return served;
  const frontier = feedFrontier(store);
  if (frontier === undefined || (served !== undefined && frontier <= served)) return served;
  cachedStatement(store, LATEST_PACKET_SQL.putMeta).run(SERVED_KEY, String(frontier));
  return frontier;
}

/**
 * Before events of `packet` are stored (a JSON dump's changes, a replication packet's removals):
 * records a rewrite in a new epoch when `packet` lies at or behind the highest frontier served.
 * A sync's own writes never do (they follow the frontier); an import of an older packet does.
 * Inside a transaction that holds several writes, a rewrite after the first joins its epoch (the
 * lower packet kept): no reader saw the epoch between them, so every cursor is refused as it would
 * be by the two, and a backfill records one rewrite per packet, not one per archive.
 */
export function recordEventsWrite(store: Store, packet: number): void {
  if (!storesBehindServed(store, packet)) return;
  const recorded = feedRewrites(store);
  const since = holding.get(store.sqlite);
  const rewrites =
    since !== undefined && currentEpoch(recorded) > since
      ? withJoinedRewrite(recorded, packet)
      : withRewrite(recorded, packet);
  cachedStatement(store, LATEST_PACKET_SQL.putMeta).run(REWRITES_KEY, rewritesText(rewrites));
}

/**
 * Writer: whether events of `packet` stored now would land at or behind the highest frontier
 * served, so that {@link recordEventsWrite} records a rewrite; notes the frontier as it does. Also
 * below a pruning cutoff: pruning keeps each MBID's newest change, so such a store may change the
 * current state that clients following the stream hold (they are told to reload it, feedWindow.ts).
 */
export function storesBehindServed(store: Store, packet: number): boolean {
  const served = noteServedFrontier(store);
  return served !== undefined && packet <= served;
}

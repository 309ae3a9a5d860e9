import type { Store } from './client.js';
import { type ChangeRow, pageOfChanges } from './queries.js';
import { cachedStatement } from './statements.js';

/**
 * The held version of `change.mbid` just before `change` (the newest change row with a smaller
 * id: an earlier packet, or an earlier line of the same JSON dump), or undefined when `change` is
 * the oldest held (the first seen, or older ones pruned by --keep-history). One read of the MBID index.
 */
export function previousChange(store: Store, change: Pick<ChangeRow, 'id' | 'mbid'>): ChangeRow | undefined {
  return pageOfChanges(
    store,
    'WHERE mbid = ? AND id < ? ORDER BY id DESC LIMIT 1',
    true,
    change.mbid,
    change.id,
  )[0];
}

/** The TIMESTAMP of `packet` (ISO 8601), or null when it is not known (no archive of it read). */
export function packetTimestamp(store: Store, packet: number): string | null {
  const value = cachedStatement(store, 'SELECT timestamp FROM packets WHERE number = ?')
    .pluck()
    .get(packet) as string | null | undefined;
  return value ?? null;
}

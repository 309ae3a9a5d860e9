import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { advanceLatestPacket, LATEST_PACKET_SQL } from './latestPacket.js';

/**
 * What `livefeed bootstrap` records in `meta` (issue 14): per full dump and entity type, that its
 * import committed (written in the import's own transaction), and the position the full dumps
 * gave. Keys: `bootstrap:<dump>:<entity>` = packet; `bootstrap_position` = `{dump, packet, at}` JSON.
 */

/** The meta key recording that `entity` of full dump `dump` is stored (its value: the packet). */
export const bootstrapDoneKey = (dump: string, entity: EntityType) => `bootstrap:${dump}:${entity}`;

/** The meta key of the position a completed bootstrap recorded. */
export const BOOTSTRAP_POSITION_KEY = 'bootstrap_position';

/**
 * (packet, at, at): the full dumps' packet becomes a complete packet (an existing row keeps its
 * completion time). Written once for SQLite and PostgreSQL (sync/postgres/bootstrap.ts).
 */
export const COMPLETE_BOOTSTRAP_PACKET_SQL = `INSERT INTO packets (number, created_at, synced_at) VALUES (?, ?, ?)
  ON CONFLICT (number) DO UPDATE SET synced_at = coalesce(packets.synced_at, excluded.synced_at)`;

/** Records, inside the import's transaction, that `entity` of full dump `dump` (packet `packet`) is stored. */
export function markBootstrapped(store: Store, dump: string, entity: EntityType, packet: number): void {
  store.sqlite.prepare(LATEST_PACKET_SQL.putMeta).run(bootstrapDoneKey(dump, entity), String(packet));
}

/** The packet of `entity` of full dump `dump` when its import committed, else undefined. */
export function bootstrappedPacket(store: Store, dump: string, entity: EntityType): number | undefined {
  const value = store.sqlite
    .prepare(LATEST_PACKET_SQL.readMeta)
    .pluck()
    .get(bootstrapDoneKey(dump, entity)) as string | undefined;
  return value === undefined ? undefined : Number(value);
}

/** Where a completed bootstrap left the copy. */
export interface BootstrapPosition {
  dump: string;
  /** The full dumps' REPLICATION_SEQUENCE. */
  packet: number;
  /** Entity types imported, upstream spelling. */
  entities: EntityType[];
  /** ISO 8601 UTC. */
  at: string;
}

/**
 * Makes packet `position.packet` the sync's position in one transaction: the packet is complete
 * (the full dumps are consistent with it), so the next sync starts at the following packet
 * (sync/worker.ts packetRange: after the highest complete packet); records `bootstrap_position`.
 */
export function recordBootstrapPosition(store: Store, position: BootstrapPosition): void {
  store.sqlite.transaction(() => {
    store.sqlite.prepare(COMPLETE_BOOTSTRAP_PACKET_SQL).run(position.packet, position.at, position.at);
    store.sqlite.prepare(LATEST_PACKET_SQL.putMeta).run(BOOTSTRAP_POSITION_KEY, JSON.stringify(position));
    advanceLatestPacket(store.sqlite);
  })();
}

/** The position the last completed bootstrap recorded, or undefined. */
export function bootstrapPosition(store: Store): BootstrapPosition | undefined {
  const value = store.sqlite
    .prepare("SELECT value FROM meta WHERE key = 'bootstrap_position'")
    .pluck()
    .get() as string | undefined;
  return value === undefined ? undefined : (JSON.parse(value) as BootstrapPosition);
}

/** Per entity type, the newest full dump (by name) whose import committed, with its packet. */
export function bootstrappedTypes(store: Store): Map<EntityType, { dump: string; packet: number }> {
  const rows = store.sqlite
    .prepare("SELECT key, value FROM meta WHERE key LIKE 'bootstrap:%' ORDER BY key")
    .all() as { key: string; value: string }[];
  const result = new Map<EntityType, { dump: string; packet: number }>();
  for (const { key, value } of rows) {
    const [, dump, entity] = key.split(':') as [string, string, EntityType];
    result.set(entity, { dump, packet: Number(value) });
  }
  return result;
}

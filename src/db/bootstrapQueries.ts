import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { noteServedFrontier } from './feedServed.js';
import { advanceLatestPacket, LATEST_PACKET_SQL, latestPacketNumber } from './latestPacket.js';
import { cachedStatement } from './statements.js';

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

/** (packet) → the lowest and highest packet the database already holds above the full dumps' one. */
export const HELD_ABOVE_SQL =
  'SELECT min(number) AS first, max(number) AS last FROM packets WHERE number > ?';

/**
 * (from, to, at): packets `from`..`to` recorded as known and incomplete, so the next sync starts at
 * `from` (sync/worker.ts packetRange: the first incomplete packet). Written once for both dialects.
 */
export const RECORD_GAP_SQL = `WITH RECURSIVE gap(n) AS (
    SELECT CAST(? AS integer) UNION ALL SELECT n + 1 FROM gap WHERE n < CAST(? AS integer)
  ) INSERT INTO packets (number, created_at) SELECT n, ? FROM gap`;

/**
 * Where the sync goes on after a bootstrap into a database that already held newer packets (a
 * `start` run before it): `heldAbove` those packets, `gap` the packets between the full dumps and
 * them, now recorded as incomplete so that the next sync fetches them first. Both null in a new
 * database.
 */
export interface BootstrapContinuation {
  heldAbove: { first: number; last: number } | null;
  gap: { from: number; to: number } | null;
  /**
   * The newest complete packet once the position is recorded (db/latestPacket.ts): below the full
   * dumps' packet when packets below it are incomplete or missing (an earlier sync or bootstrap
   * left them), and `latestPacket` stays there until a sync completes them.
   */
  latest: number | null;
}

/** The {@link BootstrapContinuation} of full dumps at `packet`, from the row of {@link HELD_ABOVE_SQL}. */
export function continuationOf(
  packet: number,
  held: { first: number | null; last: number | null } | undefined,
): BootstrapContinuation {
  if (held?.first == null || held.last == null) return { heldAbove: null, gap: null, latest: null };
  const gap = held.first > packet + 1 ? { from: packet + 1, to: held.first - 1 } : null;
  return { heldAbove: { first: held.first, last: held.last }, gap, latest: null };
}

/**
 * Makes packet `position.packet` the sync's position in one transaction: the packet is complete
 * (the full dumps are consistent with it), so the next sync starts at the following packet
 * (sync/worker.ts packetRange: after the highest complete packet); records `bootstrap_position`.
 * Packets between it and newer ones already held are recorded as incomplete: without them the sync
 * would go on after the newest packet, and `latestPacket` would stop at the gap for good.
 */
export function recordBootstrapPosition(store: Store, position: BootstrapPosition): BootstrapContinuation {
  return store.sqlite.transaction(() => {
    // Its packet and gap may lower the frontier: what was served before stays noted.
    noteServedFrontier(store);
    const held = store.sqlite.prepare(HELD_ABOVE_SQL).get(position.packet) as
      | { first: number | null; last: number | null }
      | undefined;
    const continuation = continuationOf(position.packet, held);
    const { gap } = continuation;
    if (gap) store.sqlite.prepare(RECORD_GAP_SQL).run(gap.from, gap.to, position.at);
    store.sqlite.prepare(COMPLETE_BOOTSTRAP_PACKET_SQL).run(position.packet, position.at, position.at);
    store.sqlite.prepare(LATEST_PACKET_SQL.putMeta).run(BOOTSTRAP_POSITION_KEY, JSON.stringify(position));
    advanceLatestPacket(store.sqlite);
    return { ...continuation, latest: latestPacketNumber(store) ?? null };
  })();
}

/** What the completed imports of `livefeed bootstrap` left: its position, and per entity type its newest full dump. */
export interface BootstrapState {
  /** The position the last completed bootstrap recorded, or undefined when none finished. */
  position: BootstrapPosition | undefined;
  /** Per entity type, the newest full dump (by name) whose import committed, with its packet. */
  imported: Map<EntityType, { dump: string; packet: number }>;
}

/**
 * The `meta` rows of the bootstrap, in one statement for SQLite and PostgreSQL (one snapshot:
 * the position and the imports agree). `bootstrap:` has no `%` or `_`, and its case matches, so
 * LIKE means the same on both (PostgreSQL's is case-sensitive, SQLite's not); sorted in JS, not by
 * the database's collation.
 */
export const BOOTSTRAP_STATE_SQL =
  "SELECT key, value FROM meta WHERE key = 'bootstrap_position' OR key LIKE 'bootstrap:%'";

/** The {@link BootstrapState} of the rows of {@link BOOTSTRAP_STATE_SQL}, in any order. */
export function bootstrapStateOf(rows: readonly { key: string; value: string }[]): BootstrapState {
  let position: BootstrapPosition | undefined;
  const imports: { key: string; value: string }[] = [];
  for (const row of rows) {
    if (row.key === 'bootstrap_position') position = JSON.parse(row.value) as BootstrapPosition;
    else imports.push(row);
  }
  // Code unit order is SQLite's binary order for these ASCII keys: the newest dump by name comes last.
  imports.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const imported = new Map<EntityType, { dump: string; packet: number }>();
  for (const { key, value } of imports) {
    const [, dump, entity] = key.split(':') as [string, string, EntityType];
    imported.set(entity, { dump, packet: Number(value) });
  }
  return { position, imported };
}

/** The {@link BootstrapState} of `store`, in one statement. */
export function bootstrapState(store: Store): BootstrapState {
  return bootstrapStateOf(
    cachedStatement(store, BOOTSTRAP_STATE_SQL).all() as { key: string; value: string }[],
  );
}

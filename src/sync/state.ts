import type { Store } from '../db/client.js';
import { noteServedFrontier } from '../db/feedServed.js';
import { advanceLatestPacket, lowerLatestPacket } from '../db/latestPacket.js';
import { cachedStatement } from '../db/statements.js';
import type { EntityType } from '../feed/entities.js';

/** Status of a JSON dump (GraphQL `DumpStatus`). */
export type DumpStatus = 'SYNCED' | 'NO_CHANGES' | 'PENDING' | 'FAILED';

/**
 * When JSON dumps of packets after `d.packet` were seen (column `at`): each one the sync fetched,
 * and each packet where a probe found a dump of an entity type it does not track (sync/evidence.ts).
 */
const LATER_DUMPS_SEEN = `SELECT f.fetched_at AS at FROM feed_files f WHERE f.packet > d.packet AND f.name LIKE 'json-dumps/%'
       UNION ALL SELECT s.dumps_seen_at FROM packets s WHERE s.number > d.packet AND s.dumps_seen_at IS NOT NULL`;

/**
 * The statements of this module with `?` parameters, written once for SQLite and PostgreSQL
 * (sync/postgres/packetState.ts); aliases are quoted so that both give the same names.
 */
export const PACKET_STATE_SQL = {
  /** (packet, entity) → status. */
  dumpStatus: 'SELECT status FROM dumps WHERE packet = ? AND entity = ?',
  /** (from, to) → PendingDump rows. */
  pendingDumps: `SELECT d.packet, d.entity, d.checked_at AS "checkedAt", p.timestamp,
         (SELECT min(e.at) FROM (${LATER_DUMPS_SEEN}) e) AS "laterDumpSeenAt"
       FROM dumps d JOIN packets p ON p.number = d.packet
       WHERE d.status = 'PENDING' AND d.packet BETWEEN ? AND ? ORDER BY d.packet, d.entity`,
  /** (settled_by, updated_at, packet, entity). */
  markNoChanges: `UPDATE dumps SET status = 'NO_CHANGES', settled_by = ?, updated_at = ?
    WHERE packet = ? AND entity = ? AND status IN ('PENDING', 'NO_CHANGES')`,
  /** () → (packet, entity) rows. */
  timeSettledWithEvidence: `SELECT d.packet, d.entity FROM dumps d
       WHERE d.status = 'NO_CHANGES' AND d.settled_by = 'TIME'
         AND EXISTS (${LATER_DUMPS_SEEN})
       ORDER BY d.packet, d.entity`,
  /** (...entities, from, to) → {@link IncompletePacket} rows, for `entityCount` entity types. */
  incompletePackets: (entityCount: number) =>
    `SELECT p.number,
         (SELECT count(*) FROM dumps d WHERE d.packet = p.number AND d.status IN ('SYNCED', 'NO_CHANGES')
            AND d.entity IN (${Array.from({ length: entityCount }, () => '?').join(', ')})) AS done,
         (SELECT status FROM replication_packets r WHERE r.packet = p.number) AS replication
       FROM packets p WHERE p.synced_at IS NULL AND p.number BETWEEN ? AND ? ORDER BY p.number`,
  /** (error, updated_at, packet, entity): why a PENDING dump waits although a later dump was seen (sync/hourHeld.ts). */
  explainPending: `UPDATE dumps SET error = ?, updated_at = ? WHERE packet = ? AND entity = ? AND status = 'PENDING'`,
  /** (dumps_seen_at, packet): the first time a probe found a JSON dump of the packet (sync/evidence.ts). */
  markDumpsSeen: 'UPDATE packets SET dumps_seen_at = ? WHERE number = ? AND dumps_seen_at IS NULL',
  /** (synced_at, packet). */
  complete: 'UPDATE packets SET synced_at = ? WHERE number = ?',
  /** (packet). */
  reopen: 'UPDATE packets SET synced_at = NULL WHERE number = ?',
  /**
   * (synced_at, packet) → a row when the packet is complete: its completion time moved to now, so
   * that it is announced again (reannounceComplete).
   */
  restampComplete:
    'UPDATE packets SET synced_at = ? WHERE number = ? AND synced_at IS NOT NULL RETURNING number',
  /** (packet) → a row when the packet was complete (it is not now), none when it was not. */
  reopenComplete:
    'UPDATE packets SET synced_at = NULL WHERE number = ? AND synced_at IS NOT NULL RETURNING number',
};

/** An incomplete packet of a range, with its finished JSON dumps and its replication packet's status. */
export interface IncompletePacket {
  number: number;
  done: number;
  replication: string | null;
}

/**
 * The packets of `rows` that are complete now: every tracked JSON dump SYNCED or NO_CHANGES, and
 * the replication packet (when required) neither FAILED nor PENDING nor never tried.
 */
export function completable(
  rows: readonly IncompletePacket[],
  entities: readonly EntityType[],
  requireReplication: (packet: number) => boolean,
): number[] {
  return rows
    .filter((r) => r.done === entities.length)
    .filter(
      (r) =>
        !requireReplication(r.number) ||
        (r.replication !== null && r.replication !== 'FAILED' && r.replication !== 'PENDING'),
    )
    .map((r) => r.number);
}

/** The stored state of one JSON dump, or undefined when never tried. */
export function dumpStatus(store: Store, packet: number, entity: EntityType): DumpStatus | undefined {
  const row = cachedStatement(store, PACKET_STATE_SQL.dumpStatus).get(packet, entity) as
    | { status: DumpStatus }
    | undefined;
  return row?.status;
}

/** A PENDING dump and what is known about its packet, for settling. */
export interface PendingDump {
  packet: number;
  entity: EntityType;
  /** When the last 404 was seen (ISO). */
  checkedAt: string;
  /** The packet's TIMESTAMP (ISO), when any of its archives was read. */
  timestamp: string | null;
  /** When the first JSON dump of a later packet was fetched or found by a probe (ISO), if any. */
  laterDumpSeenAt: string | null;
}

/** Every PENDING dump of packets in [from, to] with its settling evidence. */
export function pendingDumps(store: Store, from: number, to: number): PendingDump[] {
  return cachedStatement(store, PACKET_STATE_SQL.pendingDumps).all(from, to) as PendingDump[];
}

/** What settles a PENDING dump: a later packet's JSON dump (FEED.md, Errors) or `--settle-after`. */
export type SettledBy = 'LATER_DUMP' | 'TIME';

/**
 * Whether a PENDING dump can be declared NO_CHANGES. The only evidence is a JSON dump of a later
 * packet (FEED.md, Errors: the dump job publishes in packet order, possibly days late): settled when
 * the last 404 came after that dump was seen. With `settleAfterMs` (an operator's choice, null by
 * default) a 404 after TIMESTAMP + settleAfterMs also settles it, by `TIME`. `recheck` says a fresh
 * request would settle it; `wait` that nothing settles it yet.
 */
export function settleDecision(
  dump: PendingDump,
  settleAfterMs: number | null,
  now: Date,
): { decision: 'settled' | 'recheck' | 'wait'; by: SettledBy } {
  const checked = Date.parse(dump.checkedAt);
  const evidence = dump.laterDumpSeenAt ? Date.parse(dump.laterDumpSeenAt) : Number.POSITIVE_INFINITY;
  const byTime =
    dump.timestamp && settleAfterMs !== null
      ? Date.parse(dump.timestamp) + settleAfterMs
      : Number.POSITIVE_INFINITY;
  if (checked > evidence) return { decision: 'settled', by: 'LATER_DUMP' };
  if (now.getTime() >= evidence) return { decision: 'recheck', by: 'LATER_DUMP' };
  if (checked > byTime) return { decision: 'settled', by: 'TIME' };
  return { decision: now.getTime() >= byTime ? 'recheck' : 'wait', by: 'TIME' };
}

/**
 * Marks a PENDING dump NO_CHANGES, or records what settles a NO_CHANGES one now (a dump settled by
 * time, asked again with a later dump as evidence: settle.ts recheckTimeSettled), with what settled it.
 */
export function markNoChanges(
  store: Store,
  packet: number,
  entity: EntityType,
  by: SettledBy,
  now: string,
): void {
  cachedStatement(store, PACKET_STATE_SQL.markNoChanges).run(by, now, packet, entity);
}

/** Records why a PENDING dump is not settled (sync/hourHeld.ts); a later 404 clears it (markPending). */
export function explainPending(
  store: Store,
  packet: number,
  entity: EntityType,
  reason: string,
  now: string,
): void {
  cachedStatement(store, PACKET_STATE_SQL.explainPending).run(reason, now, packet, entity);
}

/** Records that a probe found a JSON dump of `packet` (sync/evidence.ts); the first time counts. */
export function markDumpsSeen(store: Store, packet: number, at: string): void {
  cachedStatement(store, PACKET_STATE_SQL.markDumpsSeen).run(at, packet);
}

/**
 * NO_CHANGES dumps settled by `--settle-after` alone for which a later packet's JSON dump has since
 * been seen: they are asked for once more (they may exist after all: FEED.md, Errors).
 */
export function timeSettledWithEvidence(store: Store): { packet: number; entity: EntityType }[] {
  return store.sqlite.prepare(PACKET_STATE_SQL.timeSettledWithEvidence).all() as {
    packet: number;
    entity: EntityType;
  }[];
}

/**
 * Sets `synced_at` on every packet in [from, to] whose tracked JSON dumps are all SYNCED or
 * NO_CHANGES and whose replication packet (when required) is terminal, and moves the latest-packet
 * mark (db/latestPacket.ts) in the same transaction. Returns the packets completed now.
 */
export function completePackets(
  store: Store,
  range: { from: number; to: number },
  entities: readonly EntityType[],
  requireReplication: (packet: number) => boolean,
  now: string,
): number[] {
  const rows = store.sqlite
    .prepare(PACKET_STATE_SQL.incompletePackets(entities.length))
    .all(...entities, range.from, range.to) as IncompletePacket[];
  const completed = completable(rows, entities, requireReplication);
  const update = cachedStatement(store, PACKET_STATE_SQL.complete);
  store.sqlite.transaction(() => {
    for (const number of completed) update.run(now, number);
    advanceLatestPacket(store.sqlite);
  })();
  return completed;
}

/**
 * Marks a complete packet incomplete again (a dump settled by time turned out FAILED when asked
 * again): the next passes cover it from there, and `latestPacket` stops before it (its mark moves
 * back in the same transaction).
 */
export function reopenPacket(store: Store, packet: number): void {
  store.sqlite.transaction(() => {
    noteServedFrontier(store);
    cachedStatement(store, PACKET_STATE_SQL.reopen).run(packet);
    lowerLatestPacket(store.sqlite, packet);
  })();
}

/**
 * Reopens `packet` (see {@link reopenPacket}) when it is complete; true when it was. A file of a
 * complete packet recorded FAILED or PENDING (which keep a packet from completing: completable)
 * reopens it in the transaction that records it (fileRecords.ts), so that no reader ever sees
 * the packet complete with a file the sync no longer asks for, nor a change stream frontier past it.
 * Call after ensurePacket (fileRecords.ts) in that transaction: it notes the frontier served.
 */
export function reopenIfComplete(store: Store, packet: number): boolean {
  // The served frontier is noted by the caller before the file's status changes (ensurePacket):
  // noted here, after a status that no longer blocks the stream, it would count a frontier never served.
  const reopened = cachedStatement(store, PACKET_STATE_SQL.reopenComplete).get(packet) !== undefined;
  if (reopened) lowerLatestPacket(store.sqlite, packet);
  return reopened;
}

/**
 * When `packet` is complete, moves its `synced_at` to `now` (ISO 8601) and returns true: what a
 * complete packet still lacked has been stored or settled on evidence (its MISSING replication
 * packet, a dump settled by `--settle-after` alone), which lets the change stream move past it, so
 * it is announced again (`packetSynced`: the watch of `livefeed serve` reads `synced_at`). False,
 * and nothing written, for a packet not complete: its completion announces it.
 */
export function restampComplete(store: Store, packet: number, now: string): boolean {
  return cachedStatement(store, PACKET_STATE_SQL.restampComplete).get(now, packet) !== undefined;
}

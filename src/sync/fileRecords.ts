import type { Store } from '../db/client.js';
import { highestStoredReplicationPacket } from '../db/replicationQueries.js';
import type { EntityType } from '../feed/entities.js';
import { nextRetryAt } from './fileRetry.js';
import { type FileKey, fileRow } from './fileRow.js';
import { recordSignatureFailure } from './signatureMissing.js';

/**
 * The writer's records of archives it could not store (issues 5 and 11): a 404 (PENDING, for a
 * replication packet MISSING in the end) or a failure (FAILED, attempts, next retry time). Each
 * statement is written once for JSON dumps and replication packets alike (fileRow.ts).
 */

/** How long a packet must keep answering 404, with a later packet there, before it is called MISSING. */
export const MISSING_AFTER_MS = 3_600_000;

/** Creates the `packets` row of `packet` when missing (`at`: ISO 8601). */
export function ensurePacket(store: Store, packet: number, at: string): void {
  store.sqlite
    .prepare('INSERT INTO packets (number, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING')
    .run(packet, at);
}

/** Records a 404 for a JSON dump: PENDING until its packet settles (FEED.md, Errors). `now`: ISO 8601. */
export function markPending(store: Store, packet: number, entity: EntityType, now: string): void {
  ensurePacket(store, packet, now);
  store.sqlite
    .prepare(
      `INSERT INTO dumps (packet, entity, status, checked_at, updated_at) VALUES (?, ?, 'PENDING', ?, ?)
       ON CONFLICT (packet, entity) DO UPDATE SET status = 'PENDING', checked_at = excluded.checked_at,
         error = NULL, settled_by = NULL, updated_at = excluded.updated_at`,
    )
    .run(packet, entity, now, now);
}

/** What {@link recordFailure} stored. */
export interface FailureRecord {
  attempts: number;
  /** ISO 8601. */
  nextRetryAt: string;
  /** The reason stored when it differs from the error's message (`signature missing upstream`). */
  reason?: string;
}

/**
 * Marks a JSON dump or replication packet FAILED with its reason, one more attempt and the next
 * retry time (shown by GraphQL `JsonDump`, `Packet.replicationError` and `failures`), and notes a
 * missing `.asc` (signatureMissing.ts). Creates the packet and file rows when needed.
 */
export function recordFailure(
  store: Store,
  file: FileKey,
  reason: string,
  now: Date,
  error?: unknown,
): FailureRecord {
  const at = now.toISOString();
  const { table, keys, args } = fileRow(file);
  ensurePacket(store, file.packet, at);
  const row = store.sqlite
    .prepare(
      `INSERT INTO ${table} (${keys}, status, error, attempts, updated_at) VALUES (${args.map(() => '?')}, 'FAILED', ?, 1, ?)
       ON CONFLICT (${keys}) DO UPDATE SET status = 'FAILED', error = excluded.error,
         attempts = ${table}.attempts + 1, updated_at = excluded.updated_at
       RETURNING attempts`,
    )
    .get(...args, reason, at) as { attempts: number };
  const next = setNextRetry(store, file, nextRetryAt(row.attempts, now));
  const stored = recordSignatureFailure(store, file, error, now);
  return { attempts: row.attempts, nextRetryAt: next, ...(stored ? { reason: stored } : {}) };
}

function setNextRetry(store: Store, file: FileKey, at: string): string {
  const { table, where, args } = fileRow(file);
  store.sqlite.prepare(`UPDATE ${table} SET next_retry_at = ? WHERE ${where}`).run(at, ...args);
  return at;
}

/**
 * True when follow mode should leave the file alone until its `next_retry_at`: a FAILED JSON dump,
 * or a FAILED, PENDING (404 so far) or MISSING replication packet (`sync --once` asks at once).
 */
export function retryDeferred(store: Store, file: FileKey, now: Date): boolean {
  const { table, where, args } = fileRow(file);
  const row = store.sqlite
    .prepare(
      `SELECT next_retry_at AS at FROM ${table} WHERE ${where} AND status IN ('FAILED', 'PENDING', 'MISSING')`,
    )
    .get(...args) as { at: string | null } | undefined;
  return !!row?.at && Date.parse(row.at) > now.getTime();
}

/**
 * Records a 404 for a packet `replication-info` lists (FEED.md, Errors: it may not be copied yet):
 * PENDING, asked again with backoff; MISSING once it has answered 404 for {@link MISSING_AFTER_MS}
 * while a later packet's replication packet is stored. Either way asked again (MISSING packets on
 * every poll, cheaply) until it appears. Returns the status recorded.
 */
export function recordNotThere(
  store: Store,
  packet: number,
  reason: string,
  now: Date,
): 'PENDING' | 'MISSING' {
  const at = now.toISOString();
  ensurePacket(store, packet, at);
  const row = store.sqlite
    .prepare(
      `INSERT INTO replication_packets (packet, status, error, attempts, missing_since, updated_at)
       VALUES (?, 'PENDING', ?, 1, ?, ?)
       ON CONFLICT (packet) DO UPDATE SET error = excluded.error, attempts = replication_packets.attempts + 1,
         missing_since = coalesce(replication_packets.missing_since, excluded.missing_since),
         updated_at = excluded.updated_at
       RETURNING attempts, missing_since AS missingSince`,
    )
    .get(packet, reason, at, at) as { attempts: number; missingSince: string };
  const laterStored = (highestStoredReplicationPacket(store) ?? Number.NEGATIVE_INFINITY) > packet;
  const missing = laterStored && now.getTime() - Date.parse(row.missingSince) >= MISSING_AFTER_MS;
  const status = missing ? 'MISSING' : 'PENDING';
  store.sqlite.prepare('UPDATE replication_packets SET status = ? WHERE packet = ?').run(status, packet);
  setNextRetry(store, { packet }, nextRetryAt(row.attempts, now));
  return status;
}

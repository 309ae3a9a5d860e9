import type { Store } from '../db/client.js';
import { noteServedFrontier } from '../db/feedServed.js';
import { highestStoredReplicationPacket } from '../db/replicationQueries.js';
import type { EntityType } from '../feed/entities.js';
import { nextRetryAt } from './fileRetry.js';
import { type FileKey, type FileRow, fileRow } from './fileRow.js';
import { recordSignatureFailure } from './signatureMissing.js';
import { reopenIfComplete } from './state.js';

/**
 * The writer's records of archives it could not store (issues 5 and 11): a 404 (PENDING, for a
 * replication packet MISSING in the end) or a failure (FAILED, attempts, next retry time). Each
 * statement is written once for JSON dumps and replication packets alike (fileRow.ts).
 */

/** How long a packet must keep answering 404, with a later packet there, before it is called MISSING. */
export const MISSING_AFTER_MS = 3_600_000;

/**
 * The statements of this module with `?` parameters, shared with the PostgreSQL twin
 * (sync/postgres/fileRecords.ts); those over either table take its {@link fileRow}.
 */
export const FILE_RECORD_SQL = {
  /** (packet, created_at). */
  ensurePacket: 'INSERT INTO packets (number, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING',
  /** (packet, entity, checked_at, updated_at). */
  markPending: `INSERT INTO dumps (packet, entity, status, checked_at, updated_at) VALUES (?, ?, 'PENDING', ?, ?)
       ON CONFLICT (packet, entity) DO UPDATE SET status = 'PENDING', checked_at = excluded.checked_at,
         error = NULL, settled_by = NULL, updated_at = excluded.updated_at`,
  /**
   * (...key, error, updated_at) → attempts, status: FAILED, but a MISSING replication packet stays
   * MISSING (its failure recorded as any other: error, attempts, next retry time), so that the
   * change stream keeps waiting for it and every pass asks for it again (recordFailure).
   */
  recordFailure: ({ table, keys, args }: FileRow) =>
    `INSERT INTO ${table} (${keys}, status, error, attempts, updated_at) VALUES (${args.map(() => '?')}, 'FAILED', ?, 1, ?)
       ON CONFLICT (${keys}) DO UPDATE SET
         status = CASE WHEN ${table}.status = 'MISSING' THEN 'MISSING' ELSE 'FAILED' END, error = excluded.error,
         attempts = ${table}.attempts + 1, updated_at = excluded.updated_at
       RETURNING attempts, status`,
  /** (next_retry_at, ...key). */
  setNextRetry: ({ table, where }: FileRow) => `UPDATE ${table} SET next_retry_at = ? WHERE ${where}`,
  /** (packet, error, missing_since, updated_at) → attempts, missingSince. */
  notThere: `INSERT INTO replication_packets (packet, status, error, attempts, missing_since, updated_at)
       VALUES (?, 'PENDING', ?, 1, ?, ?)
       ON CONFLICT (packet) DO UPDATE SET error = excluded.error, attempts = replication_packets.attempts + 1,
         missing_since = coalesce(replication_packets.missing_since, excluded.missing_since),
         updated_at = excluded.updated_at
       RETURNING attempts, missing_since AS "missingSince"`,
  /** (status, packet). */
  setReplicationStatus: 'UPDATE replication_packets SET status = ? WHERE packet = ?',
  /** (...key) → at. */
  retryAt: ({ table, where }: FileRow) =>
    `SELECT next_retry_at AS at FROM ${table} WHERE ${where} AND status IN ('FAILED', 'PENDING', 'MISSING')`,
};

/** True when a file whose retry time is `at` (ISO 8601 or null) waits past `now`. */
export function waitsForRetry(at: string | null | undefined, now: Date): boolean {
  return !!at && Date.parse(at) > now.getTime();
}

/** Creates the `packets` row of `packet` when missing (`at`: ISO 8601). */
export function ensurePacket(store: Store, packet: number, at: string): void {
  // A packet below the first one held lowers the frontier: what was served before stays noted.
  noteServedFrontier(store);
  store.sqlite.prepare(FILE_RECORD_SQL.ensurePacket).run(packet, at);
}

/** Records a 404 for a JSON dump: PENDING until its packet settles (FEED.md, Errors). `now`: ISO 8601. */
export function markPending(store: Store, packet: number, entity: EntityType, now: string): void {
  ensurePacket(store, packet, now);
  store.sqlite.prepare(FILE_RECORD_SQL.markPending).run(packet, entity, now, now);
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
 * missing `.asc` (signatureMissing.ts). Creates the packet and file rows when needed. A MISSING
 * replication packet stays MISSING ({@link FILE_RECORD_SQL}); a FAILED file of a complete packet
 * (a dump settled by `--settle-after` asked again) reopens it (state.ts reopenIfComplete): the
 * next passes cover it again. All in one transaction.
 */
export function recordFailure(
  store: Store,
  file: FileKey,
  reason: string,
  now: Date,
  error?: unknown,
): FailureRecord {
  const at = now.toISOString();
  const row = fileRow(file);
  return store.sqlite.transaction(() => {
    ensurePacket(store, file.packet, at);
    const { attempts, status } = store.sqlite
      .prepare(FILE_RECORD_SQL.recordFailure(row))
      .get(...row.args, reason, at) as { attempts: number; status: string };
    if (status === 'FAILED') reopenIfComplete(store, file.packet);
    const next = setNextRetry(store, file, nextRetryAt(attempts, now));
    const stored = recordSignatureFailure(store, file, error, now);
    return { attempts, nextRetryAt: next, ...(stored ? { reason: stored } : {}) };
  })();
}

function setNextRetry(store: Store, file: FileKey, at: string): string {
  const row = fileRow(file);
  store.sqlite.prepare(FILE_RECORD_SQL.setNextRetry(row)).run(at, ...row.args);
  return at;
}

/**
 * True when follow mode should leave the file alone until its `next_retry_at`: a FAILED JSON dump,
 * or a FAILED, PENDING (404 so far) or MISSING replication packet (`sync --once` asks at once).
 */
export function retryDeferred(store: Store, file: FileKey, now: Date): boolean {
  const row = fileRow(file);
  const found = store.sqlite.prepare(FILE_RECORD_SQL.retryAt(row)).get(...row.args) as
    | { at: string | null }
    | undefined;
  return waitsForRetry(found?.at, now);
}

/**
 * PENDING, or MISSING once `packet` has answered 404 since `missingSince` (ISO 8601) for
 * {@link MISSING_AFTER_MS} while a later packet's replication packet is stored (`highestStored`).
 */
export function notThereStatus(
  packet: number,
  missingSince: string,
  highestStored: number | undefined,
  now: Date,
): 'PENDING' | 'MISSING' {
  const laterStored = (highestStored ?? Number.NEGATIVE_INFINITY) > packet;
  return laterStored && now.getTime() - Date.parse(missingSince) >= MISSING_AFTER_MS ? 'MISSING' : 'PENDING';
}

/**
 * Records a 404 for a packet `replication-info` lists (FEED.md, Errors: it may not be copied yet):
 * PENDING, asked again with backoff; MISSING once it has answered 404 for {@link MISSING_AFTER_MS}
 * while a later packet's replication packet is stored. Either way asked again (MISSING packets on
 * every poll, cheaply) until it appears. PENDING reopens a complete packet (a `--from` pass asking
 * for a replication packet never tried: state.ts reopenIfComplete). In one transaction; returns
 * the status recorded.
 */
export function recordNotThere(
  store: Store,
  packet: number,
  reason: string,
  now: Date,
): 'PENDING' | 'MISSING' {
  const at = now.toISOString();
  return store.sqlite.transaction(() => {
    ensurePacket(store, packet, at);
    const row = store.sqlite.prepare(FILE_RECORD_SQL.notThere).get(packet, reason, at, at) as {
      attempts: number;
      missingSince: string;
    };
    const status = notThereStatus(packet, row.missingSince, highestStoredReplicationPacket(store), now);
    store.sqlite.prepare(FILE_RECORD_SQL.setReplicationStatus).run(status, packet);
    if (status === 'PENDING') reopenIfComplete(store, packet);
    setNextRetry(store, { packet }, nextRetryAt(row.attempts, now));
    return status;
  })();
}

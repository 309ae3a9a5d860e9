import type { PostgresStore } from '../../db/postgres/client.js';
import { inPgTransaction, type PgQueryable, pgRow, pgRows } from '../../db/postgres/sql.js';
import { HIGHEST_STORED_SQL } from '../../db/replicationQueries.js';
import type { EntityType } from '../../feed/entities.js';
import { type FailureRecord, FILE_RECORD_SQL, notThereStatus, waitsForRetry } from '../fileRecords.js';
import { nextRetryAt } from '../fileRetry.js';
import { type FileKey, fileRow } from '../fileRow.js';
import { SIGNATURE_MISSING_SQL, signatureMissing, signatureMissingReason } from '../signatureMissing.js';
import { noteServedFrontierOn } from './feedServed.js';
import { reopenIfCompleteOn } from './packetState.js';

/**
 * The records of archives not stored, on PostgreSQL: sync/fileRecords.ts and signatureMissing.ts
 * with the same statements (written once there) and the same rules (FEED.md, Errors and Signatures).
 */

/** A 404 for a JSON dump: PENDING until its packet settles (sync/fileRecords.ts markPending). */
export async function markPendingPostgres(
  store: PostgresStore,
  packet: number,
  entity: EntityType,
  now: string,
): Promise<void> {
  await inPgTransaction(store.pool, async (client) => {
    await noteServedFrontierOn(client);
    await pgRows(client, FILE_RECORD_SQL.ensurePacket, [packet, now]);
    await pgRows(client, FILE_RECORD_SQL.markPending, [packet, entity, now, now]);
  });
}

/**
 * FAILED with `reason` (a MISSING replication packet stays MISSING), one more attempt, the next
 * retry time and the missing `.asc` noted, and a complete packet reopened when its file is now
 * FAILED, in one transaction (sync/fileRecords.ts recordFailure).
 */
export async function recordFailurePostgres(
  store: PostgresStore,
  file: FileKey,
  reason: string,
  now: Date,
  error?: unknown,
): Promise<FailureRecord> {
  const at = now.toISOString();
  const row = fileRow(file);
  return inPgTransaction(store.pool, async (client) => {
    await noteServedFrontierOn(client);
    await pgRows(client, FILE_RECORD_SQL.ensurePacket, [file.packet, at]);
    const failed = await pgRow<{ attempts: number; status: string }>(
      client,
      FILE_RECORD_SQL.recordFailure(row),
      [...row.args, reason, at],
    );
    const attempts = failed!.attempts;
    if (failed!.status === 'FAILED') await reopenIfCompleteOn(client, file.packet);
    const next = nextRetryAt(attempts, now);
    await pgRows(client, FILE_RECORD_SQL.setNextRetry(row), [next, ...row.args]);
    const stored = await noteSignature(client, file, error, now);
    return { attempts, nextRetryAt: next, ...(stored ? { reason: stored } : {}) };
  });
}

/**
 * Notes since when the file's `.asc` has been missing, or clears it for another failure; returns
 * the reason stored once it has been missing a day (sync/signatureMissing.ts recordSignatureFailure).
 */
export async function noteSignature(
  on: PgQueryable,
  file: FileKey,
  error: unknown,
  now: Date,
): Promise<string | undefined> {
  const row = fileRow(file);
  const noted = await pgRow<{ since: string | null }>(on, SIGNATURE_MISSING_SQL.note(row), [
    signatureMissing(error) ? 1 : 0,
    now.toISOString(),
    ...row.args,
  ]);
  const reason = signatureMissingReason(error, noted?.since, now);
  if (reason) await pgRows(on, SIGNATURE_MISSING_SQL.setReason(row), [reason, ...row.args]);
  return reason;
}

/**
 * A 404 for a replication packet `replication-info` lists: PENDING (a complete packet reopened), or
 * MISSING after an hour with a later packet stored, with its next retry time, in one transaction
 * (sync/fileRecords.ts recordNotThere).
 */
export function recordNotTherePostgres(
  store: PostgresStore,
  packet: number,
  reason: string,
  now: Date,
): Promise<'PENDING' | 'MISSING'> {
  const at = now.toISOString();
  return inPgTransaction(store.pool, async (client) => {
    await noteServedFrontierOn(client);
    await pgRows(client, FILE_RECORD_SQL.ensurePacket, [packet, at]);
    const row = await pgRow<{ attempts: number; missingSince: string }>(client, FILE_RECORD_SQL.notThere, [
      packet,
      reason,
      at,
      at,
    ]);
    const highest = await pgRow<{ n: number | null }>(client, HIGHEST_STORED_SQL);
    const status = notThereStatus(packet, row!.missingSince, highest?.n ?? undefined, now);
    await pgRows(client, FILE_RECORD_SQL.setReplicationStatus, [status, packet]);
    if (status === 'PENDING') await reopenIfCompleteOn(client, packet);
    const file = fileRow({ packet });
    await pgRows(client, FILE_RECORD_SQL.setNextRetry(file), [nextRetryAt(row!.attempts, now), ...file.args]);
    return status;
  });
}

/** True when follow mode leaves the file alone until its `next_retry_at` (sync/fileRecords.ts retryDeferred). */
export async function retryDeferredPostgres(
  store: PostgresStore,
  file: FileKey,
  now: Date,
): Promise<boolean> {
  const row = fileRow(file);
  const found = await pgRow<{ at: string | null }>(store.pool, FILE_RECORD_SQL.retryAt(row), row.args);
  return waitsForRetry(found?.at, now);
}

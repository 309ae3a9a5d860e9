import { checkpoint, MAX_DEFERRED_WAL_BYTES, walBytes } from '../db/checkpoint.js';
import type { EntityType } from '../feed/entities.js';
import { FeedAuthError, safeMessage } from '../feed/errors.js';
import { jsonDumpPath } from '../feed/protocol/urls.js';
import type { SyncContext, SyncReport } from './context.js';
import { discard, fetchFile, keep } from './fetchFile.js';
import { type FailureRecord, noteFileOutcome, recordDumpFailure, withRedownload } from './fileRetry.js';
import { ingestJsonDump } from './ingest.js';
import { EXPECTED_JSON_DUMPS_SCHEMA_NUMBER } from './packetFacts.js';
import { markPending } from './state.js';

/**
 * One JSON dump's step of a sync pass (fetch, verify, store) and the guard that records a file's
 * failure and lets the pass go on. Split from worker.ts, which orders the steps.
 */

/** Checkpoints the writer's WAL (see deferCheckpoints) and logs it; a failure is logged, not thrown. */
export function runCheckpoint(ctx: SyncContext): void {
  try {
    const result = checkpoint(ctx.store.sqlite);
    if (result.walFrames > 0)
      ctx.observe.logger.debug(
        { event: 'checkpoint', ...result, ms: Math.round(result.ms) },
        'WAL checkpointed',
      );
  } catch (error) {
    ctx.observe.logger.warn({ event: 'checkpoint-failed', err: safeMessage(error) }, 'WAL checkpoint failed');
  }
}

/**
 * Runs one file's work; an auth error or abort stops the sync, anything else is recorded (attempts,
 * next retry time) and reported. Several files in a row failing on the network end the pass
 * (fileRetry.ts, FeedUnavailableError).
 */
export async function guard(
  ctx: SyncContext,
  report: SyncReport,
  packet: number,
  file: string,
  work: () => Promise<unknown>,
  onFailure?: (reason: string, error: unknown) => FailureRecord | undefined,
): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof FeedAuthError || ctx.signal?.aborted) throw error;
    const failure = onFailure?.(safeMessage(error), error);
    // The recorded reason wins: e.g. "signature missing upstream" once the .asc has been missing a day.
    const reason = failure?.reason ?? safeMessage(error);
    report.problems.push({ packet, file, reason });
    ctx.observe.logger.error(
      {
        event: 'file-failed',
        packet,
        file,
        err: reason,
        attempts: failure?.attempts,
        nextRetryAt: failure?.nextRetryAt,
      },
      `cannot store ${file}: ${reason}${failure ? ` (attempt ${failure.attempts}; next retry ${failure.nextRetryAt})` : ''}`,
    );
    noteFileOutcome(report, error);
    return;
  }
  noteFileOutcome(report);
}

/** Fetches and stores one JSON dump; false when it is not on the feed (yet). */
export async function syncDump(
  ctx: SyncContext,
  packet: number,
  entity: EntityType,
  now: () => Date,
  report: SyncReport,
): Promise<boolean> {
  const name = jsonDumpPath(packet, entity);
  // A body that does not decompress or verify was damaged in transit: fetch it again (bounded).
  return withRedownload({ packet, name }, ctx.observe.logger, () =>
    fetchAndStoreDump(ctx, packet, entity, now, report),
  );
}

async function fetchAndStoreDump(
  ctx: SyncContext,
  packet: number,
  entity: EntityType,
  now: () => Date,
  report: SyncReport,
): Promise<boolean> {
  const name = jsonDumpPath(packet, entity);
  const fetched = await fetchFile(ctx.feed.client, ctx.feed.verifier, {
    name,
    packet,
    dataDir: ctx.feed.dataDir,
    signal: ctx.signal,
    now,
  });
  if (!fetched) {
    markPending(ctx.store, packet, entity, now().toISOString());
    return false;
  }
  try {
    const result = await ingestJsonDump(ctx.store, {
      packet,
      entity,
      archivePath: fetched.tmpPath,
      file: fetched.record,
      signal: ctx.signal,
      maxBytes: ctx.feed.maxDumpBytes,
      now,
      beforeCommit: () => keep(ctx.feed.dataDir, fetched),
    });
    report.quarantined += result.quarantineCount;
    const schemaNumber = result.metadata.jsonDumpsSchemaNumber;
    if (schemaNumber !== null && schemaNumber !== EXPECTED_JSON_DUMPS_SCHEMA_NUMBER) {
      ctx.observe.logger.warn(
        { event: 'json-dump-schema', packet, entity, jsonDumpsSchemaNumber: schemaNumber },
        `${name} has JSON_DUMPS_SCHEMA_NUMBER ${schemaNumber}, expected ${EXPECTED_JSON_DUMPS_SCHEMA_NUMBER}: stored, recorded as an event`,
      );
    }
    if (walBytes(ctx.store.path) > MAX_DEFERRED_WAL_BYTES) runCheckpoint(ctx);
    const level = result.quarantineCount > 0 ? 'warn' : 'info';
    ctx.observe.logger[level](
      {
        event: 'dump-stored',
        packet,
        entity,
        changes: result.changeCount,
        quarantined: result.quarantineCount,
        bytes: fetched.record.size,
        signature: fetched.record.signature,
      },
      `stored ${name}: ${result.changeCount} changes${result.quarantineCount ? `, ${result.quarantineCount} lines quarantined` : ''}`,
    );
    ctx.observe.observer?.dumpStored?.({
      packet,
      entity,
      changes: result.changeCount,
      quarantined: result.quarantineCount,
      bytes: fetched.record.size,
    });
    return true;
  } finally {
    discard(fetched);
  }
}

/**
 * Asks the feed for one JSON dump under {@link guard}: stored (counted in the report), PENDING on a
 * 404, or FAILED with its reason and next retry time. Resolves to true when it was stored.
 */
export async function askDump(
  ctx: SyncContext,
  report: SyncReport,
  packet: number,
  entity: EntityType,
  now: () => Date,
): Promise<boolean> {
  let stored = false;
  await guard(
    ctx,
    report,
    packet,
    jsonDumpPath(packet, entity),
    async () => {
      stored = await syncDump(ctx, packet, entity, now, report);
    },
    (reason, error) => recordDumpFailure(ctx.store, packet, entity, reason, now(), error),
  );
  if (stored) report.dumpsStored++;
  return stored;
}

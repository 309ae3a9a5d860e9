import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkpoint, deferCheckpoints, MAX_DEFERRED_WAL_BYTES, walBytes } from '../db/checkpoint.js';
import type { Store } from '../db/client.js';
import { recordUpstream } from '../db/status.js';
import type { EntityType } from '../feed/entities.js';
import { FeedAuthError, safeMessage } from '../feed/errors.js';
import { removeStaleDownloads } from '../feed/partial.js';
import { jsonDumpPath, replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext } from './context.js';
import { discard, fetchFile, keep } from './fetchFile.js';
import {
  dumpDeferred,
  type FailureRecord,
  noteFileOutcome,
  recordDumpFailure,
  recordReplicationRetry,
  replicationDeferred,
  withRedownload,
} from './fileRetry.js';
import { ingestJsonDump } from './ingest.js';
import type { PassOutcome } from './observer.js';
import { syncReplicationPacket } from './replicationStep.js';
import { applyRetention } from './retention.js';
import {
  completePackets,
  dumpStatus,
  markNoChanges,
  markPending,
  pendingDumps,
  settleDecision,
  syncPosition,
} from './state.js';

/** A file the sync could not store, with the reason (packet and file named). */
export interface SyncProblem {
  packet: number;
  file: string;
  reason: string;
}

/** Outcome of one pass over the feed. */
export interface SyncReport {
  latest: number | null;
  from: number | null;
  to: number | null;
  dumpsStored: number;
  completed: number[];
  pending: number;
  problems: SyncProblem[];
  /** Malformed lines quarantined by the dumps stored in this pass. */
  quarantined: number;
  /** FAILED files not tried because their next retry time had not come (follow mode). */
  deferred: number;
}

/** Packets the first sync of an empty database covers: the latest and the 23 before it (one day). */
export const INITIAL_WINDOW = 24;

/**
 * Chooses the packets of this pass: `from` (flag) or the first incomplete packet or the one after
 * the highest known, or latest − 23 on an empty database; up to `to` (flag) or the latest.
 */
export function packetRange(
  store: Store,
  latest: number,
  flags: { from?: number; to?: number },
): { from: number; to: number } {
  const to = Math.min(flags.to ?? latest, latest);
  if (flags.from !== undefined) return { from: flags.from, to };
  const { firstIncomplete, highest } = syncPosition(store);
  const from =
    firstIncomplete ?? (highest !== null ? highest + 1 : Math.max(1, latest - (INITIAL_WINDOW - 1)));
  return { from, to };
}

/**
 * One pass: reads `replication-info`, then for each packet of the range in order fetches, verifies
 * and stores every tracked JSON dump not yet SYNCED or NO_CHANGES (and the replication packet),
 * settles missing dumps (FEED.md, Errors), completes packets, and applies `keepFiles` retention.
 * File failures are recorded on the file and reported; the pass goes on.
 * @throws FeedAuthError at once when the feed refuses the token; an AbortError when aborted.
 */
export async function syncOnce(
  ctx: SyncContext,
  flags: { from?: number; to?: number } = {},
): Promise<SyncReport> {
  const started = performance.now();
  const finished = (outcome: PassOutcome) =>
    ctx.observer?.passFinished?.({ seconds: (performance.now() - started) / 1000, outcome });
  try {
    const report = await syncPass(ctx, flags);
    finished(report.problems.length > 0 ? 'problems' : 'ok');
    return report;
  } catch (error) {
    finished('error');
    throw error;
  }
}

async function syncPass(ctx: SyncContext, flags: { from?: number; to?: number }): Promise<SyncReport> {
  const now = ctx.now ?? (() => new Date());
  deferCheckpoints(ctx.store.sqlite);
  try {
    return await syncPassDeferred(ctx, flags, now);
  } finally {
    // Stopping (SIGTERM) should not wait for a checkpoint; closing the database makes one anyway.
    if (!ctx.signal?.aborted) runCheckpoint(ctx);
  }
}

/** Checkpoints the writer's WAL (see deferCheckpoints) and logs it; a failure is logged, not thrown. */
function runCheckpoint(ctx: SyncContext): void {
  try {
    const result = checkpoint(ctx.store.sqlite);
    if (result.walFrames > 0)
      ctx.logger.debug({ event: 'checkpoint', ...result, ms: Math.round(result.ms) }, 'WAL checkpointed');
  } catch (error) {
    ctx.logger.warn({ event: 'checkpoint-failed', err: safeMessage(error) }, 'WAL checkpoint failed');
  }
}

async function syncPassDeferred(
  ctx: SyncContext,
  flags: { from?: number; to?: number },
  now: () => Date,
): Promise<SyncReport> {
  const latest = await ctx.client.replicationInfo(ctx.signal);
  // Downloads a crash left behind; a day old at least, so none of a sync still running.
  await removeStaleDownloads(join(ctx.dataDir, 'tmp'), 24 * 3_600_000);
  recordUpstream(ctx.store, latest, now().toISOString());
  const report: SyncReport = {
    latest,
    from: null,
    to: null,
    dumpsStored: 0,
    completed: [],
    pending: 0,
    problems: [],
    quarantined: 0,
    deferred: 0,
  };
  if (latest === null) {
    ctx.logger.info({ event: 'feed-empty' }, 'the feed has no packets yet');
    return report;
  }
  const range = packetRange(ctx.store, latest, flags);
  Object.assign(report, range);
  ctx.observer?.passStarted?.({ latest, ...range });
  ctx.logger.info(
    { event: 'sync-start', latest, from: range.from, to: range.to },
    `syncing packets ${range.from}..${range.to}`,
  );
  for (let packet = range.from; packet <= range.to; packet++) {
    ctx.signal?.throwIfAborted();
    await syncPacket(ctx, packet, report, now);
    ctx.observer?.packetVisited?.(packet);
  }
  await settle(ctx, range, report, now);
  const requireReplication = (p: number) => ctx.replicationPackets && !ctx.skipPackets.has(p);
  report.completed = completePackets(ctx.store, range, ctx.entities, requireReplication, now().toISOString());
  for (const packet of report.completed) ctx.onPacketSynced?.(packet);
  report.pending = pendingDumps(ctx.store, range.from, range.to).length;
  if (ctx.keepFiles) applyRetention(ctx.store, ctx.dataDir, ctx.keepFiles, now(), ctx.logger);
  ctx.logger.info(
    {
      event: 'sync-pass',
      latest,
      stored: report.dumpsStored,
      completed: report.completed.length,
      pending: report.pending,
      failed: report.problems.length,
      quarantined: report.quarantined,
      deferred: report.deferred,
    },
    'sync pass finished',
  );
  return report;
}

async function syncPacket(
  ctx: SyncContext,
  packet: number,
  report: SyncReport,
  now: () => Date,
): Promise<void> {
  if (ctx.replicationPackets && !ctx.skipPackets.has(packet)) {
    if (ctx.deferFailed && replicationDeferred(ctx.store, packet, now())) report.deferred++;
    else {
      const name = replicationPacketName(packet, ctx.deployment);
      await guard(
        ctx,
        report,
        packet,
        `replication packet ${packet}`,
        () => withRedownload({ packet, name }, ctx.logger, () => syncReplicationPacket(ctx, packet, now)),
        () => recordReplicationRetry(ctx.store, packet, now()),
      );
    }
  }
  for (const entity of ctx.entities) {
    const status = dumpStatus(ctx.store, packet, entity);
    if (status === 'SYNCED' || status === 'NO_CHANGES') continue;
    if (status === 'FAILED' && ctx.deferFailed && dumpDeferred(ctx.store, packet, entity, now())) {
      report.deferred++;
      continue;
    }
    await guard(
      ctx,
      report,
      packet,
      jsonDumpPath(packet, entity),
      async () => {
        if (await syncDump(ctx, packet, entity, now, report)) report.dumpsStored++;
      },
      (reason) => recordDumpFailure(ctx.store, packet, entity, reason, now()),
    );
  }
}

/**
 * Runs one file's work; an auth error or abort stops the sync, anything else is recorded (attempts,
 * next retry time) and reported. Several files in a row failing on the network end the pass
 * (fileRetry.ts, FeedUnavailableError).
 */
async function guard(
  ctx: SyncContext,
  report: SyncReport,
  packet: number,
  file: string,
  work: () => Promise<unknown>,
  onFailure?: (reason: string) => FailureRecord | undefined,
): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof FeedAuthError || ctx.signal?.aborted) throw error;
    const reason = safeMessage(error);
    const failure = onFailure?.(reason);
    report.problems.push({ packet, file, reason });
    ctx.logger.error(
      { event: 'file-failed', packet, file, err: reason, ...failure },
      `cannot store ${file}: ${reason}${failure ? ` (attempt ${failure.attempts}; next retry ${failure.nextRetryAt})` : ''}`,
    );
    noteFileOutcome(report, error);
    return;
  }
  noteFileOutcome(report);
}

/** Fetches and stores one JSON dump; false when it is not on the feed (yet). */
async function syncDump(
  ctx: SyncContext,
  packet: number,
  entity: EntityType,
  now: () => Date,
  report: SyncReport,
): Promise<boolean> {
  const name = jsonDumpPath(packet, entity);
  // A body that does not decompress or verify was damaged in transit: fetch it again (bounded).
  return withRedownload({ packet, name }, ctx.logger, () =>
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
  const fetched = await fetchFile(ctx.client, ctx.verifier, {
    name,
    packet,
    dataDir: ctx.dataDir,
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
      maxBytes: ctx.maxDumpBytes,
      now,
      beforeCommit: () => keep(ctx.dataDir, fetched),
    });
    report.quarantined += result.quarantineCount;
    if (walBytes(ctx.store.path) > MAX_DEFERRED_WAL_BYTES) runCheckpoint(ctx);
    const level = result.quarantineCount > 0 ? 'warn' : 'info';
    ctx.logger[level](
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
    ctx.observer?.dumpStored?.({
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

/** Declares settled missing dumps NO_CHANGES, asking once more where the 404 predates the evidence. */
async function settle(
  ctx: SyncContext,
  range: { from: number; to: number },
  report: SyncReport,
  now: () => Date,
): Promise<void> {
  for (const dump of pendingDumps(ctx.store, range.from, range.to)) {
    if (!ctx.entities.includes(dump.entity)) continue;
    let decision = settleDecision(dump, ctx.settleAfterMs, now());
    if (decision === 'recheck') {
      let stored = false;
      await guard(
        ctx,
        report,
        dump.packet,
        jsonDumpPath(dump.packet, dump.entity),
        async () => {
          stored = await syncDump(ctx, dump.packet, dump.entity, now, report);
        },
        (reason) => recordDumpFailure(ctx.store, dump.packet, dump.entity, reason, now()),
      );
      if (stored) report.dumpsStored++;
      decision = dumpStatus(ctx.store, dump.packet, dump.entity) === 'PENDING' ? 'settled' : 'wait';
    }
    if (decision === 'settled') markNoChanges(ctx.store, dump.packet, dump.entity, now().toISOString());
  }
}

/**
 * Follow mode: a pass, then a poll of `replication-info` every `pollIntervalMs` (±20% jitter) until
 * the signal aborts. Failures of a pass (network outages) are logged and retried on the next
 * poll with backoff; an auth error stops following.
 * @throws FeedAuthError
 */
export async function follow(
  ctx: SyncContext,
  options: { pollIntervalMs: number; from?: number; to?: number },
): Promise<void> {
  let failures = 0;
  let flags: { from?: number; to?: number } = { from: options.from, to: options.to };
  // A file that keeps failing waits for its next retry time instead of costing every poll.
  const passCtx: SyncContext = { ...ctx, deferFailed: true };
  while (!ctx.signal?.aborted) {
    try {
      await syncOnce(passCtx, flags);
      flags = { to: options.to };
      failures = 0;
    } catch (error) {
      if (error instanceof FeedAuthError || ctx.signal?.aborted) throw error;
      failures++;
      ctx.logger.error(
        { event: 'sync-pass-failed', failures, err: safeMessage(error) },
        'sync pass failed; will retry',
      );
    }
    const base =
      failures === 0 ? options.pollIntervalMs : Math.min(options.pollIntervalMs, 5_000 * 2 ** failures);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    try {
      await sleep(delay, undefined, { signal: ctx.signal });
    } catch {
      return;
    }
  }
}

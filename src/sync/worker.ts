import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FeedFatalError, safeMessage } from '../feed/errors.js';
import { jsonDumpPath, replicationPacketName } from '../feed/protocol/urls.js';
import { removeStaleDownloads } from '../feed/staleDownloads.js';
import { completeBehind, requiresReplication } from './completeBehind.js';
import type { SyncContext, SyncReport } from './context.js';
import { askDump } from './dumpStep.js';
import { hourHeldCheck } from './hourHeld.js';
import type { PassOutcome } from './observer.js';
import { Prefetcher } from './prefetch.js';
import { askReplicationPacket, recheckMissingPackets } from './replicationStep.js';
import { warnRewritten } from './rewriteNotice.js';
import { recheckTimeSettled, settle } from './settle.js';
import type { SyncStore } from './syncStore.js';

/** Packets the first sync of an empty database covers: the latest and the 23 before it (one day). */
export const INITIAL_WINDOW = 24;

/**
 * Chooses the packets of this pass: `from` (flag) or the first incomplete packet or the one after
 * the highest known, or on an empty database latest − 23, or the oldest packet the feed holds when
 * it says so and that is later (`historyFrom`, a livefeed mirror); up to `to` (flag) or the latest.
 */
export async function packetRange(
  store: SyncStore,
  latest: number,
  flags: { from?: number; to?: number },
  historyFrom?: number,
): Promise<{ from: number; to: number }> {
  const to = Math.min(flags.to ?? latest, latest);
  if (flags.from !== undefined) return { from: flags.from, to };
  const { firstIncomplete, highest } = await store.packetPosition();
  const from =
    firstIncomplete ??
    (highest !== null
      ? highest + 1
      : Math.max(
          1,
          latest - (INITIAL_WINDOW - 1),
          historyFrom !== undefined && historyFrom <= latest ? historyFrom : 1,
        ));
  return { from, to };
}

/**
 * One pass: reads `replication-info`, then for each packet of the range in order fetches, verifies
 * and stores every tracked JSON dump not yet SYNCED or NO_CHANGES (and the replication packet),
 * settles missing dumps on a later packet's JSON dump (FEED.md, Errors), asks again for dumps
 * `--settle-after` settled once such evidence exists and for replication packets before the range
 * not stored (MISSING), completes packets, and applies `keepFiles` retention.
 * File failures are recorded on the file and reported; the pass goes on.
 * @throws FeedFatalError at once when the feed refuses the token or serves the other deployment; an AbortError when aborted.
 */
export async function syncOnce(
  ctx: SyncContext,
  flags: { from?: number; to?: number } = {},
): Promise<SyncReport> {
  const started = performance.now();
  const finished = (outcome: PassOutcome) =>
    ctx.observe.observer?.passFinished?.({ seconds: (performance.now() - started) / 1000, outcome });
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
  ctx.store.housekeeping('passStarted', ctx.observe.logger);
  try {
    return await syncPassDeferred(ctx, flags, now);
  } finally {
    // Stopping (SIGTERM) should not wait for a checkpoint; closing the database makes one anyway.
    if (!ctx.signal?.aborted) ctx.store.housekeeping('passEnded', ctx.observe.logger);
  }
}

async function syncPassDeferred(
  ctx: SyncContext,
  flags: { from?: number; to?: number },
  now: () => Date,
): Promise<SyncReport> {
  const { latest, historyFrom } = await ctx.feed.client.feedInfo(ctx.signal);
  // Downloads a crash left behind; a day old at least, so none of a sync still running.
  await removeStaleDownloads(join(ctx.feed.dataDir, 'tmp'), 24 * 3_600_000);
  await ctx.store.recordUpstream(latest, now().toISOString());
  const report: SyncReport = {
    latest,
    from: null,
    to: null,
    dumpsStored: 0,
    completed: [],
    reannounced: [],
    pending: 0,
    problems: [],
    quarantined: 0,
    deferred: 0,
  };
  if (latest === null) {
    ctx.observe.logger.info({ event: 'feed-empty' }, 'the feed has no packets yet');
    return report;
  }
  const range = await packetRange(ctx.store, latest, flags, historyFrom);
  const rewrites = await ctx.store.feedRewrites();
  Object.assign(report, range);
  ctx.observe.observer?.passStarted?.({ latest, ...range });
  ctx.observe.logger.info(
    { event: 'sync-start', latest, from: range.from, to: range.to, historyFrom },
    `syncing packets ${range.from}..${range.to}`,
  );
  // Packets completed while the pass stored the others were announced then (completeBehind).
  let announced = 0;
  try {
    announced = await storeAndComplete(ctx, range, report, now);
  } finally {
    // Also after a failure: the packets stored before it stay stored, and the next pass starts
    // from the rewrites as they are then.
    const after = await ctx.store.feedRewrites().catch(() => rewrites);
    warnRewritten(ctx.observe.logger, rewrites, after);
  }
  for (const packet of [...report.reannounced, ...report.completed.slice(announced)])
    ctx.observe.onPacketSynced?.(packet);
  report.pending = (await ctx.store.pendingDumps(range.from, range.to)).length;
  if (ctx.policy.keepFiles)
    await ctx.store.applyRetention(ctx.feed.dataDir, ctx.policy.keepFiles, now(), ctx.observe.logger);
  if (ctx.policy.keepHistory && ctx.policy.keepHistory.kind !== 'all')
    await ctx.store.history.prune(ctx.policy.keepHistory, now(), ctx.observe.logger);
  ctx.observe.logger.info(
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

/**
 * Stores the range's packets, completing each that can be as it goes (completeBehind.ts), then
 * settles and rechecks what waits, and completes what can be.
 * @returns how many of `report.completed` were completed, and announced, while storing
 */
async function storeAndComplete(
  ctx: SyncContext,
  range: { from: number; to: number },
  report: SyncReport,
  now: () => Date,
): Promise<number> {
  const hourHeld = hourHeldCheck(ctx, now);
  await syncPackets(ctx, range, report, now, (packet) =>
    completeBehind(ctx, range, packet, report, now, hourHeld),
  );
  const announced = report.completed.length;
  await settle(ctx, range, report, now, hourHeld);
  await recheckTimeSettled(ctx, report, now, hourHeld);
  await recheckMissingPackets(ctx, range.from, report, now);
  report.completed.push(
    ...(await ctx.store.completePackets(
      range,
      ctx.policy.entities,
      requiresReplication(ctx),
      now().toISOString(),
    )),
  );
  return announced;
}

/**
 * The packets of the range in order, with the next files (JSON dumps, replication packets and their
 * signatures) downloading while one is stored (prefetch.ts); each file is still verified, stored
 * and committed in its turn.
 */
async function syncPackets(
  ctx: SyncContext,
  range: { from: number; to: number },
  report: SyncReport,
  now: () => Date,
  stored: (packet: number) => Promise<unknown>,
): Promise<void> {
  const prefetch = new Prefetcher(ctx.feed.client, ctx.feed.dataDir, ctx.signal);
  prefetch.plan(await filesToAsk(ctx, range));
  const passCtx = { ...ctx, prefetch };
  const { logger } = ctx.observe;
  try {
    for (let packet = range.from; packet <= range.to; packet++) {
      ctx.signal?.throwIfAborted();
      ctx.store.housekeeping('packetStarted', logger);
      try {
        await syncPacket(passCtx, packet, report, now);
      } finally {
        // What was stored before an error or abort is committed too.
        ctx.store.housekeeping('packetEnded', logger);
      }
      await stored(packet);
      ctx.observe.observer?.packetVisited?.(packet);
    }
  } finally {
    prefetch.close();
  }
}

/**
 * The files of the range not stored yet, in the order the pass asks for them (syncPacket): each
 * packet's replication packet when the sync follows them, then its JSON dumps.
 */
async function filesToAsk(ctx: SyncContext, range: { from: number; to: number }): Promise<string[]> {
  const names: string[] = [];
  for (let packet = range.from; packet <= range.to; packet++) {
    if (
      ctx.policy.replicationPackets &&
      !ctx.policy.skipPackets.has(packet) &&
      !(await ctx.store.replication.replicationStored(packet))
    )
      names.push(replicationPacketName(packet, ctx.feed.deployment));
    for (const entity of ctx.policy.entities) {
      const status = await ctx.store.dumpStatus(packet, entity);
      if (status !== 'SYNCED' && status !== 'NO_CHANGES') names.push(jsonDumpPath(packet, entity));
    }
  }
  return names;
}

async function syncPacket(
  ctx: SyncContext,
  packet: number,
  report: SyncReport,
  now: () => Date,
): Promise<void> {
  if (ctx.policy.replicationPackets && !ctx.policy.skipPackets.has(packet)) {
    await askReplicationPacket(ctx, report, packet, now);
  }
  for (const entity of ctx.policy.entities) {
    const status = await ctx.store.dumpStatus(packet, entity);
    if (status === 'SYNCED' || status === 'NO_CHANGES') continue;
    if (
      status === 'FAILED' &&
      ctx.policy.deferFailed &&
      (await ctx.store.retryDeferred({ packet, entity }, now()))
    ) {
      report.deferred++;
      continue;
    }
    await askDump(ctx, report, packet, entity, now);
  }
}

/**
 * Follow mode: a pass, then a poll of `replication-info` every `pollIntervalMs` (±20% jitter) until
 * the signal aborts. Failures of a pass (network outages) are logged and retried on the next
 * poll with backoff; an auth error stops following.
 * @throws FeedFatalError
 */
export async function follow(
  ctx: SyncContext,
  options: { pollIntervalMs: number; from?: number; to?: number },
): Promise<void> {
  let failures = 0;
  let flags: { from?: number; to?: number } = { from: options.from, to: options.to };
  // A file that keeps failing waits for its next retry time instead of costing every poll.
  const passCtx: SyncContext = { ...ctx, policy: { ...ctx.policy, deferFailed: true } };
  while (!ctx.signal?.aborted) {
    try {
      await syncOnce(passCtx, flags);
      flags = { to: options.to };
      failures = 0;
    } catch (error) {
      if (error instanceof FeedFatalError || ctx.signal?.aborted) throw error;
      failures++;
      ctx.observe.logger.error(
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

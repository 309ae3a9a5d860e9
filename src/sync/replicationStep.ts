import { replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext, SyncReport } from './context.js';
import { assertDeploymentNames, checksDeploymentNames } from './deploymentCheck.js';
import type { FetchedFile } from './fetchFile.js';
import { runFileStep } from './fileStep.js';
import { reannounce } from './settle.js';
import type { ReplicationRecords } from './syncStore.js';

/** Raised when the feed has no replication packet that replication-info says exists (FEED.md, Errors). */
export class MissingPacketError extends Error {
  override name = 'MissingPacketError';
}

/**
 * The replication step of one packet in a pass, as a {@link runFileStep}: fetches, verifies and
 * stores replication packet `packet` (production `replication-N-v2.tar.bz2`, test deployment
 * `replication-N.tar.bz2`; FEED.md) unless already SYNCED, or skips it while its retry time has not
 * come in follow mode (`deferFailed`; `--once` asks at once). A 404 is recorded PENDING, or
 * MISSING after an hour with a later packet stored (reported; see recordNotThere), and asked
 * again later; other failures are recorded FAILED with their next retry time (a MISSING packet
 * stays MISSING: fileRecords.ts recordFailure).
 */
export async function askReplicationPacket(
  ctx: SyncContext,
  report: SyncReport,
  packet: number,
  now: () => Date,
): Promise<void> {
  const { replication } = ctx.store;
  if (ctx.policy.deferFailed && (await ctx.store.retryDeferred({ packet }, now()))) {
    report.deferred++;
    return;
  }
  const name = replicationPacketName(packet, ctx.feed.deployment);
  await runFileStep(
    ctx,
    report,
    {
      packet,
      name,
      label: `replication packet ${packet}`,
      stored: () => replication.replicationStored(packet),
      store: async (fetched, beforeCommit) => {
        await storeReplication(ctx, replication, fetched, beforeCommit, now);
        // A MISSING packet's replication packet, stored at last: the change stream moves past it.
        await reannounce(ctx, report, packet, now);
      },
      notThere: async () => {
        // Not from the latest packet, whose files may be in the middle of their copy (FEED.md, Errors).
        if (checksDeploymentNames(ctx) && report.latest !== null && packet < report.latest)
          await assertDeploymentNames(ctx, packet);
        const reason = `${name} is not on the feed although replication-info lists packet ${packet} or later`;
        if ((await replication.recordNotThere(packet, reason, now())) === 'MISSING')
          throw new MissingPacketError(reason);
        ctx.observe.logger.warn(
          { event: 'replication-pending', packet, file: name },
          `${reason}; asking again later (it may not be copied yet)`,
        );
      },
      recordFailure: async (reason, error) => {
        // MISSING is recorded by recordNotThere: reported, asked again on every poll, never FAILED
        // (another failure of a MISSING packet keeps it MISSING: fileRecords.ts recordFailure).
        if (!(error instanceof MissingPacketError)) {
          return ctx.store.recordFailure({ packet }, reason, now(), error);
        }
        await replication.recordSignatureFailure({ packet }, error, now());
        return undefined;
      },
    },
    now,
  );
}

/** Stores a fetched replication packet and logs what it held (schema change, unresolved deletions). */
async function storeReplication(
  ctx: SyncContext,
  replication: ReplicationRecords,
  fetched: FetchedFile,
  beforeCommit: () => void,
  now: () => Date,
): Promise<void> {
  const { name, packet } = fetched.record;
  const stored = await replication.storeReplicationPacket(packet, fetched.tmpPath, {
    signal: ctx.signal,
    fileName: name,
    now,
    file: fetched.record,
    beforeCommit,
    maxBytes: ctx.feed.maxDumpBytes,
  });
  const logger = ctx.observe.logger;
  logger.info(
    {
      event: 'replication-stored',
      packet,
      format: stored.format,
      rows: stored.rowCount,
      removals: stored.removals,
      signature: fetched.record.signature,
    },
    `stored ${name}: ${stored.rowCount} row changes, ${stored.removals} removals`,
  );
  if (stored.schemaChange) {
    logger.warn(
      { event: 'schema-change', packet, ...stored.schemaChange },
      `schema sequence changed from ${stored.schemaChange.from} to ${stored.schemaChange.to}`,
    );
  }
  if (stored.unresolvedDeletions > 0) {
    logger.warn(
      { event: 'removal-unresolved', packet, rows: stored.unresolvedDeletions },
      'deleted rows whose MBID no stored packet shows',
    );
  }
}

/**
 * Asks again for the replication packets below `from` not stored (MISSING; FAILED or PENDING left
 * on a complete packet by an earlier version): their packets are complete, so the pass's range no
 * longer holds them. One request each, with backoff in follow mode; `--skip-packets` are left alone.
 */
export async function recheckMissingPackets(
  ctx: SyncContext,
  from: number,
  report: SyncReport,
  now: () => Date,
): Promise<void> {
  if (!ctx.policy.replicationPackets) return;
  for (const packet of await ctx.store.replication.missingReplicationPackets(from)) {
    if (ctx.policy.skipPackets.has(packet)) continue;
    ctx.signal?.throwIfAborted();
    await askReplicationPacket(ctx, report, packet, now);
  }
}

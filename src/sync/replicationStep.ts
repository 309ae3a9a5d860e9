import { replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext, SyncReport } from './context.js';
import type { FetchedFile } from './fetchFile.js';
import { nextRetryAt, recordReplicationFailure, replicationDeferred } from './fileRetry.js';
import { runFileStep } from './fileStep.js';
import { storeReplicationPacket } from './replication.js';
import { recordSignatureFailure } from './signatureMissing.js';

/** How long a packet must keep answering 404, with a later packet there, before it is called MISSING. */
export const MISSING_AFTER_MS = 3_600_000;

/** Stored status of a packet's replication packet, or undefined when never tried. */
function replicationStatus(ctx: SyncContext, packet: number): string | undefined {
  const row = ctx.store.sqlite
    .prepare('SELECT status FROM replication_packets WHERE packet = ?')
    .get(packet) as { status: string } | undefined;
  return row?.status;
}

/**
 * Records a 404 for a packet `replication-info` lists (FEED.md, Errors: it may not be copied yet):
 * PENDING, asked again with backoff; MISSING once it has answered 404 for {@link MISSING_AFTER_MS}
 * while a later packet's replication packet is stored. Either way asked again (MISSING packets on
 * every poll, cheaply) until it appears. Returns the status recorded.
 */
function recordNotThere(ctx: SyncContext, packet: number, reason: string, now: Date): 'PENDING' | 'MISSING' {
  const at = now.toISOString();
  const db = ctx.store.sqlite;
  db.prepare('INSERT INTO packets (number, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING').run(packet, at);
  const row = db
    .prepare(
      `INSERT INTO replication_packets (packet, status, error, attempts, missing_since, updated_at)
       VALUES (?, 'PENDING', ?, 1, ?, ?)
       ON CONFLICT (packet) DO UPDATE SET error = excluded.error, attempts = replication_packets.attempts + 1,
         missing_since = coalesce(replication_packets.missing_since, excluded.missing_since),
         updated_at = excluded.updated_at
       RETURNING attempts, missing_since AS missingSince`,
    )
    .get(packet, reason, at, at) as { attempts: number; missingSince: string };
  const laterStored = db
    .prepare(`SELECT 1 FROM replication_packets WHERE packet > ? AND status = 'SYNCED' LIMIT 1`)
    .get(packet);
  const missing = !!laterStored && now.getTime() - Date.parse(row.missingSince) >= MISSING_AFTER_MS;
  const status = missing ? 'MISSING' : 'PENDING';
  db.prepare('UPDATE replication_packets SET status = ?, next_retry_at = ? WHERE packet = ?').run(
    status,
    nextRetryAt(row.attempts, now),
    packet,
  );
  return status;
}

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
 * again later; other failures are recorded FAILED with their next retry time.
 */
export async function askReplicationPacket(
  ctx: SyncContext,
  report: SyncReport,
  packet: number,
  now: () => Date,
): Promise<void> {
  if (ctx.policy.deferFailed && replicationDeferred(ctx.store, packet, now())) {
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
      stored: () => replicationStatus(ctx, packet) === 'SYNCED',
      store: (fetched, beforeCommit) => storeReplication(ctx, fetched, beforeCommit, now),
      notThere: () => {
        const reason = `${name} is not on the feed although replication-info lists packet ${packet} or later`;
        if (recordNotThere(ctx, packet, reason, now()) === 'MISSING') throw new MissingPacketError(reason);
        ctx.observe.logger.warn(
          { event: 'replication-pending', packet, file: name },
          `${reason}; asking again later (it may not be copied yet)`,
        );
      },
      recordFailure: (reason, error) => {
        // MISSING is recorded by recordNotThere: reported, asked again on every poll, never FAILED.
        if (!(error instanceof MissingPacketError)) {
          return recordReplicationFailure(ctx.store, packet, reason, now(), error);
        }
        recordSignatureFailure(ctx.store, 'replication_packets', { packet }, error, now());
        return undefined;
      },
    },
    now,
  );
}

/** Stores a fetched replication packet and logs what it held (schema change, unresolved deletions). */
async function storeReplication(
  ctx: SyncContext,
  fetched: FetchedFile,
  beforeCommit: () => void,
  now: () => Date,
): Promise<void> {
  const { name, packet } = fetched.record;
  const stored = await storeReplicationPacket(ctx.store, packet, fetched.tmpPath, {
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
 * Asks again for the MISSING replication packets below `from` (their packets are complete, so the
 * pass's range no longer holds them): one request each, with backoff in follow mode.
 */
export async function recheckMissingPackets(
  ctx: SyncContext,
  from: number,
  report: SyncReport,
  now: () => Date,
): Promise<void> {
  if (!ctx.policy.replicationPackets) return;
  const rows = ctx.store.sqlite
    .prepare(`SELECT packet FROM replication_packets WHERE status = 'MISSING' AND packet < ? ORDER BY packet`)
    .all(from) as { packet: number }[];
  for (const { packet } of rows) {
    if (ctx.policy.skipPackets.has(packet)) continue;
    ctx.signal?.throwIfAborted();
    await askReplicationPacket(ctx, report, packet, now);
  }
}

import { replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext, SyncReport } from './context.js';
import { guard } from './dumpStep.js';
import { discard, fetchFile, keep } from './fetchFile.js';
import { nextRetryAt, recordReplicationRetry, replicationDeferred, withRedownload } from './fileRetry.js';
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

function record(ctx: SyncContext, packet: number, status: 'FAILED', error: string, now: string): void {
  ctx.store.sqlite
    .prepare('INSERT INTO packets (number, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING')
    .run(packet, now);
  ctx.store.sqlite
    .prepare(
      `INSERT INTO replication_packets (packet, status, error, attempts, updated_at) VALUES (?, ?, ?, 1, ?)
       ON CONFLICT (packet) DO UPDATE SET status = excluded.status, error = excluded.error,
         attempts = replication_packets.attempts + 1, updated_at = excluded.updated_at`,
    )
    .run(packet, status, error, now);
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
 * Fetches, verifies and stores replication packet `packet` (production `replication-N-v2.tar.bz2`,
 * test deployment `replication-N.tar.bz2`; FEED.md) unless already SYNCED.
 * A 404 is recorded PENDING, or MISSING after an hour with a later packet stored (see
 * recordNotThere), and asked again later; other failures are recorded FAILED and retried.
 * @throws MissingPacketError once the packet is MISSING, SignatureError, ArchiveError and the client's errors.
 */
export async function syncReplicationPacket(
  ctx: SyncContext,
  packet: number,
  now: () => Date,
): Promise<void> {
  const status = replicationStatus(ctx, packet);
  if (status === 'SYNCED') return;
  const name = replicationPacketName(packet, ctx.feed.deployment);
  try {
    const fetched = await fetchFile(ctx.feed.client, ctx.feed.verifier, {
      name,
      packet,
      dataDir: ctx.feed.dataDir,
      signal: ctx.signal,
      now,
    });
    if (!fetched) {
      const reason = `${name} is not on the feed although replication-info lists packet ${packet} or later`;
      if (recordNotThere(ctx, packet, reason, now()) === 'MISSING') throw new MissingPacketError(reason);
      ctx.observe.logger.warn(
        { event: 'replication-pending', packet, file: name },
        `${reason}; asking again later (it may not be copied yet)`,
      );
      return;
    }
    try {
      const stored = await storeReplicationPacket(ctx.store, packet, fetched.tmpPath, {
        signal: ctx.signal,
        fileName: name,
        now,
        file: fetched.record,
        beforeCommit: () => keep(ctx.feed.dataDir, fetched),
        maxBytes: ctx.feed.maxDumpBytes,
      });
      ctx.observe.logger.info(
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
        ctx.observe.logger.warn(
          { event: 'schema-change', packet, ...stored.schemaChange },
          `schema sequence changed from ${stored.schemaChange.from} to ${stored.schemaChange.to}`,
        );
      }
      if (stored.unresolvedDeletions > 0) {
        ctx.observe.logger.warn(
          { event: 'removal-unresolved', packet, rows: stored.unresolvedDeletions },
          'deleted rows whose MBID no stored packet shows',
        );
      }
    } finally {
      discard(fetched);
    }
  } catch (error) {
    if (!(error instanceof MissingPacketError) && !ctx.signal?.aborted) {
      record(ctx, packet, 'FAILED', (error as Error).message, now().toISOString());
    }
    throw error;
  }
}

/**
 * The replication step of one packet in a pass: skipped while its retry time has not come in follow
 * mode (`deferFailed`; `--once` asks at once), else {@link syncReplicationPacket} under the pass's
 * guard, a body unreadable as downloaded fetched again (bounded).
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
  await guard(
    ctx,
    report,
    packet,
    `replication packet ${packet}`,
    () => withRedownload({ packet, name }, ctx.observe.logger, () => syncReplicationPacket(ctx, packet, now)),
    (_reason, error) => {
      const reason = recordSignatureFailure(ctx.store, 'replication_packets', { packet }, error, now());
      const retry = recordReplicationRetry(ctx.store, packet, now());
      return retry && reason ? { ...retry, reason } : retry;
    },
  );
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

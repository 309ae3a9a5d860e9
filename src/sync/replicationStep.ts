import { replicationPacketName } from '../feed/protocol/urls.js';
import type { SyncContext } from './context.js';
import { discard, fetchFile, keep } from './fetchFile.js';
import { storeReplicationPacket } from './replication.js';

/** Stored status of a packet's replication packet, or undefined when never tried. */
function replicationStatus(ctx: SyncContext, packet: number): string | undefined {
  const row = ctx.store.sqlite
    .prepare('SELECT status FROM replication_packets WHERE packet = ?')
    .get(packet) as { status: string } | undefined;
  return row?.status;
}

function record(
  ctx: SyncContext,
  packet: number,
  status: 'FAILED' | 'MISSING',
  error: string,
  now: string,
): void {
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

/** Raised when the feed has no replication packet that replication-info says exists (FEED.md, Errors). */
export class MissingPacketError extends Error {
  override name = 'MissingPacketError';
}

/**
 * Fetches, verifies and stores replication packet `packet` (production `replication-N-v2.tar.bz2`,
 * test deployment `replication-N.tar.bz2`; FEED.md) unless already SYNCED or MISSING. Its
 * TIMESTAMP settles the packet's JSON dumps without waiting for the next hour.
 * A 404 is recorded MISSING (upstream has lost packets) and reported once; other failures are
 * recorded FAILED and retried by the next sync.
 * @throws MissingPacketError, SignatureError, ArchiveError and the client's errors.
 */
export async function syncReplicationPacket(
  ctx: SyncContext,
  packet: number,
  now: () => Date,
): Promise<void> {
  const status = replicationStatus(ctx, packet);
  if (status === 'SYNCED' || status === 'MISSING') return;
  const name = replicationPacketName(packet, ctx.deployment);
  try {
    const fetched = await fetchFile(ctx.client, ctx.verifier, {
      name,
      packet,
      dataDir: ctx.dataDir,
      signal: ctx.signal,
      now,
    });
    if (!fetched) {
      const reason = `${name} is not on the feed although replication-info lists packet ${packet} or later`;
      record(ctx, packet, 'MISSING', reason, now().toISOString());
      throw new MissingPacketError(reason);
    }
    try {
      const stored = await storeReplicationPacket(ctx.store, packet, fetched.tmpPath, {
        signal: ctx.signal,
        fileName: name,
        now,
        file: fetched.record,
        beforeCommit: () => keep(ctx.dataDir, fetched),
        maxBytes: ctx.maxDumpBytes,
      });
      ctx.logger.info(
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
        ctx.logger.warn(
          { event: 'schema-change', packet, ...stored.schemaChange },
          `schema sequence changed from ${stored.schemaChange.from} to ${stored.schemaChange.to}`,
        );
      }
      if (stored.unresolvedDeletions > 0) {
        ctx.logger.warn(
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

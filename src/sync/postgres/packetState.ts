import type pg from 'pg';
import { type LatestMark, loweredMark, MARK_KEY, walkStart } from '../../db/latestPacket.js';
import type { PostgresStore } from '../../db/postgres/client.js';
import { firstPacket, readMark, walk } from '../../db/postgres/latestPacket.js';
import { notifyPacketsCompleted } from '../../db/postgres/notify.js';
import { inPgTransaction, type PgQueryable, pgRow, pgRows } from '../../db/postgres/sql.js';
import { PACKET_POSITION_SQL, PUT_META, upstreamMeta } from '../../db/status.js';
import type { EntityType } from '../../feed/entities.js';
import { completable, type IncompletePacket, PACKET_STATE_SQL } from '../state.js';
import { noteServedFrontierOn } from './feedServed.js';

/**
 * Where the packets stand on PostgreSQL: sync/state.ts, db/status.ts and the latest-packet mark of
 * db/latestPacket.ts with the same statements (written once there) and the same rules. A packet is
 * completed, and the mark moved, in one transaction, so a reader never sees one without the other.
 * The mark's reads are db/postgres/latestPacket.ts, which the readers share.
 */

async function writeMark(on: PgQueryable, mark: LatestMark): Promise<void> {
  await pgRows(on, PUT_META, [MARK_KEY, JSON.stringify(mark)]);
}

/** Moves the mark over the packets completed since it was written (db/latestPacket.ts advanceLatestPacket). */
export async function advanceLatestPacket(client: pg.ClientBase): Promise<void> {
  const first = await firstPacket(client);
  if (first === null) return;
  const start = walkStart(await readMark(client), first);
  await writeMark(client, { from: first, number: await walk(client, first, start) });
}

/**
 * Completes the packets of the range that are complete now and moves the mark, in one transaction
 * that also notifies `livefeed_packets` of each (db/postgres/notify.ts).
 */
export function completePacketsPostgres(
  store: PostgresStore,
  range: { from: number; to: number },
  entities: readonly EntityType[],
  requireReplication: (packet: number) => boolean,
  now: string,
): Promise<number[]> {
  return inPgTransaction(store.pool, async (client) => {
    const rows = await pgRows<IncompletePacket>(client, PACKET_STATE_SQL.incompletePackets(entities.length), [
      ...entities,
      range.from,
      range.to,
    ]);
    const completed = completable(rows, entities, requireReplication);
    for (const number of completed) await pgRows(client, PACKET_STATE_SQL.complete, [now, number]);
    await advanceLatestPacket(client);
    // Delivered at COMMIT: servers LISTENing publish `packetSynced`, webhooks deliver.
    await notifyPacketsCompleted(client, completed);
    return completed;
  });
}

/** sync/state.ts restampComplete on PostgreSQL, `livefeed_packets` notified at COMMIT. */
export function restampCompletePostgres(store: PostgresStore, packet: number, now: string): Promise<boolean> {
  return inPgTransaction(store.pool, async (client) => {
    const restamped = (await pgRows(client, PACKET_STATE_SQL.restampComplete, [now, packet])).length > 0;
    if (restamped) await notifyPacketsCompleted(client, [packet]);
    return restamped;
  });
}

/** A complete packet becomes incomplete again and the mark moves back before it, in one transaction. */
export function reopenPacketPostgres(store: PostgresStore, packet: number): Promise<void> {
  return inPgTransaction(store.pool, async (client) => {
    await noteServedFrontierOn(client);
    await pgRows(client, PACKET_STATE_SQL.reopen, [packet]);
    await lowerMark(client, packet);
  });
}

async function lowerMark(client: PgQueryable, packet: number): Promise<void> {
  const lowered = loweredMark(await readMark(client), packet);
  if (lowered) await writeMark(client, lowered);
}

/**
 * Reopens `packet` when it is complete, on `client` inside the caller's transaction (the one that
 * records its file FAILED or PENDING: sync/state.ts reopenIfComplete); true when it was complete.
 */
export async function reopenIfCompleteOn(client: PgQueryable, packet: number): Promise<boolean> {
  // Noted by the caller before the file's status changed (sync/state.ts reopenIfComplete says why).
  const reopened = (await pgRows(client, PACKET_STATE_SQL.reopenComplete, [packet])).length > 0;
  if (reopened) await lowerMark(client, packet);
  return reopened;
}

/** Lowest incomplete and highest known packet (db/status.ts packetPosition). */
export async function packetPositionPostgres(
  store: PostgresStore,
): Promise<{ firstIncomplete: number | null; highest: number | null }> {
  const row = await pgRow<{ firstIncomplete: number | null; highest: number | null }>(
    store.pool,
    PACKET_POSITION_SQL,
  );
  return { firstIncomplete: row?.firstIncomplete ?? null, highest: row?.highest ?? null };
}

/** What `replication-info` said and when, in one transaction (db/status.ts recordUpstream). */
export function recordUpstreamPostgres(
  store: PostgresStore,
  latest: number | null,
  at: string,
): Promise<void> {
  return inPgTransaction(store.pool, async (client) => {
    for (const [key, value] of upstreamMeta(latest, at)) await pgRows(client, PUT_META, [key, value]);
  });
}

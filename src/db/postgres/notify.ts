import type pg from 'pg';

/**
 * The channel of completed packets on PostgreSQL (docs/POSTGRES_PORT.md, step 6): the sync writer
 * sends one notification per packet it completes, its payload the packet number as text, inside
 * the transaction that completes it. PostgreSQL delivers a notification at COMMIT and drops it on
 * ROLLBACK, so a listener never hears of a packet it cannot read yet, nor of one that was undone.
 */
export const PACKETS_CHANNEL = 'livefeed_packets';

/**
 * `NOTIFY livefeed_packets, '<packet>'` for each of `packets`, in order, on the transaction's
 * `client` (`pg_notify`: the payload as a parameter).
 * @throws the driver's error (the transaction then rolls back, the notifications with it)
 */
export async function notifyPacketsCompleted(
  client: pg.ClientBase,
  packets: readonly number[],
): Promise<void> {
  for (const packet of packets)
    await client.query('SELECT pg_notify($1, $2)', [PACKETS_CHANNEL, String(packet)]);
}

import type { SyncContext } from './worker.js';

/**
 * Fetches, verifies and stores replication packet `packet` (issue 3). Placeholder until the
 * replication layer lands: replication packets are not synced yet.
 */
export async function syncReplicationPacket(_ctx: SyncContext, _packet: number, _now: () => Date): Promise<void> {}

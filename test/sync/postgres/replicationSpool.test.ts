import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { storeReplicationPacketPostgres } from '../../../src/sync/postgres/replication.js';
import { tempDir } from '../../support/harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { artistRow, type FixtureRow, writeReplicationPacket } from '../../support/replicationArchives.js';

/**
 * A replication packet's staged rows on PostgreSQL go to a temporary file once they pass their
 * bound in memory (sync/postgres/textSpool.ts): the packet stored that way, v2 and v1, equals the
 * same packet staged in memory, row for row, removals included.
 */

const gid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function rows(count: number): FixtureRow[] {
  return Array.from({ length: count }, (_, i) => {
    const row = artistRow({ id: i + 1, gid: gid(i + 1), name: `Artist ${i} "ü" \\ tab\there` });
    const op = i % 10 === 9 ? 'd' : i % 3 === 0 ? 'u' : 'i';
    return {
      xid: 5_000 + Math.floor(i / 20),
      table: 'musicbrainz.artist',
      op,
      oldData: op === 'i' ? null : { ...row, name: `Old ${i}` },
      newData: op === 'd' ? null : row,
    };
  });
}

describePostgres('replication packets staged beyond memory', () => {
  let cluster: PostgresCluster | undefined;
  const stores: Record<'memory' | 'file', PostgresStore> = {} as never;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir('lf-spool-');
    cluster = await startPostgres();
    for (const kind of ['memory', 'file'] as const) {
      const { url } = await cluster.createDatabase(`spool_${kind}`);
      stores[kind] = await openPostgresStore({ connectionString: url, display: kind });
    }
  }, 120_000);

  afterAll(async () => {
    for (const store of Object.values(stores)) await store?.close();
    await cluster?.stop();
    await dir?.cleanup();
  });

  const snapshot = async (store: PostgresStore) => ({
    rows: (await store.pool.query('SELECT * FROM row_changes ORDER BY packet, ord')).rows,
    removals: (await store.pool.query('SELECT * FROM removals ORDER BY packet, mbid, kind')).rows,
    packets: (
      await store.pool.query('SELECT packet, row_count, format FROM replication_packets ORDER BY packet')
    ).rows,
  });

  it('v2 and v1 packets: the same rows from a file as from memory', async () => {
    const v2 = await writeReplicationPacket(dir.dir, { packet: 70, format: 'v2', rows: rows(1_500) });
    const v1 = await writeReplicationPacket(dir.dir, { packet: 71, format: 'v1', rows: rows(600) });
    for (const [packet, path] of [
      [70, v2],
      [71, v1],
    ] as const) {
      const now = () => new Date('2026-11-25T00:00:00Z');
      await storeReplicationPacketPostgres(stores.memory, packet, path, { now });
      // 200 characters: every staging table goes to its file after a row or two.
      await storeReplicationPacketPostgres(stores.file, packet, path, { now, spoolMemoryChars: 200 });
    }
    const memory = await snapshot(stores.memory);
    expect(memory.rows).toHaveLength(2_100);
    expect(memory.removals.length).toBeGreaterThan(0);
    expect(await snapshot(stores.file)).toEqual(memory);
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { inPgReadSnapshot } from '../../../src/db/postgres/snapshot.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

// The change stream's reads run several statements; a writer committing between two of them must
// not be half seen (db/postgres/snapshot.ts, as db/snapshot.ts on SQLite).
describePostgres('a read snapshot on PostgreSQL', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  const count = async (on: { query: PostgresStore['pool']['query'] }) =>
    Number((await on.query('SELECT count(*) AS n FROM packets')).rows[0].n);
  const insert = (number: number) =>
    store.pool.query("INSERT INTO packets (number, created_at) VALUES ($1, '2026-05-11T00:00:00.000Z')", [
      number,
    ]);

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('snapshot');
    store = await openPostgresStore({ connectionString: url, display: 'snapshot' });
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('every statement of the read sees the database as at its first, whatever commits meanwhile', async () => {
    await insert(1);
    const seen = await inPgReadSnapshot(store.pool, async (client) => {
      const before = await count(client);
      await insert(2);
      return [before, await count(client), await count(store.pool)];
    });
    expect(seen).toEqual([1, 1, 2]);
    expect(await count(store.pool)).toBe(2);
  });

  it('is read only, and an error ends it and gives the connection back', async () => {
    const error = await inPgReadSnapshot(store.pool, (client) => client.query('DELETE FROM packets')).catch(
      (e: unknown) => e,
    );
    expect(String(error)).toMatch(/read-only transaction/);
    await expect(inPgReadSnapshot(store.pool, async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(store.pool.totalCount - store.pool.idleCount).toBe(0);
    expect(await count(store.pool)).toBe(2);
  });
});

import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { watchPostgresPackets } from '../../../src/db/postgres/listen.js';
import { PACKETS_CHANNEL } from '../../../src/db/postgres/notify.js';
import { ENTITY_TYPES } from '../../../src/feed/entities.js';
import { createPacketEvents } from '../../../src/ops/events.js';
import { completePacketsPostgres, reopenPacketPostgres } from '../../../src/sync/postgres/packetState.js';
import { postgresSyncStore } from '../../../src/sync/postgres/syncStore.js';
import { tempDir } from '../../support/harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { syncSampleFeedOn } from '../../support/synced.js';

/**
 * LISTEN/NOTIFY of completed packets (issue 17, docs/POSTGRES_PORT.md step 6): the sync writer's
 * notifications, delivered at COMMIT only, and the server's watch (`watchPostgresPackets`) on a
 * real cluster, its connection killed by the server (`pg_terminate_backend`).
 */
describePostgres('completed packets over LISTEN/NOTIFY', () => {
  let cluster: PostgresCluster | undefined;
  let url: string;
  let store: PostgresStore;
  let packets: number[];
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const listeners: pg.Client[] = [];

  /** A plain LISTEN on a connection of its own; collects the payloads. */
  const listen = async () => {
    const client = new pg.Client({ connectionString: url });
    listeners.push(client);
    await client.connect();
    const heard: { packet: string; complete: boolean }[] = [];
    const checks: Promise<void>[] = [];
    client.on('notification', (message) => {
      const entry = { packet: message.payload!, complete: false };
      heard.push(entry);
      // Read on another connection when it arrives: the packet is complete there already.
      checks.push(
        store.pool
          .query('SELECT synced_at IS NOT NULL AS complete FROM packets WHERE number = $1', [
            Number(message.payload),
          ])
          .then(({ rows }) => {
            entry.complete = rows[0]?.complete === true;
          }),
      );
    });
    await client.query(`LISTEN ${PACKETS_CHANNEL}`);
    return { heard, settled: () => Promise.all(checks) };
  };
  const complete = (packet: number) =>
    completePacketsPostgres(
      store,
      { from: packet, to: packet },
      ENTITY_TYPES,
      () => false,
      new Date().toISOString(),
    );

  beforeAll(async () => {
    cluster = await startPostgres();
    url = (await cluster.createDatabase('listen_test')).url;
    store = await openPostgresStore({
      connectionString: url,
      display: 'postgres://***@127.0.0.1/listen_test',
    });
    dir = await tempDir('lf-listen-');
  }, 60_000);
  afterAll(async () => {
    for (const client of listeners) await client.end().catch(() => {});
    await store?.close();
    await dir?.cleanup();
    await cluster?.stop();
  });

  it('the sync notifies each packet it completes, once committed, in order', async () => {
    const listener = await listen();
    await syncSampleFeedOn(postgresSyncStore(store), dir.dir);
    packets = (
      await store.pool.query<{ number: number }>(
        'SELECT number FROM packets WHERE synced_at IS NOT NULL ORDER BY number',
      )
    ).rows.map((row) => row.number);
    expect(packets.length).toBeGreaterThan(1);
    await expect.poll(() => listener.heard.length).toBe(packets.length);
    await listener.settled();
    expect(listener.heard).toEqual(packets.map((packet) => ({ packet: String(packet), complete: true })));
  });

  it('a packet whose transaction rolls back is never announced', async () => {
    const last = packets.at(-1)!;
    await reopenPacketPostgres(store, last);
    const listener = await listen();
    // Fails the completing transaction at COMMIT, after its NOTIFY was queued.
    await store.pool.query(`CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$`);
    await store.pool.query(`CREATE CONSTRAINT TRIGGER refuse_commit AFTER UPDATE ON packets
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()`);
    try {
      await expect(complete(last)).rejects.toThrow(/refused at commit/);
    } finally {
      await store.pool.query('DROP TRIGGER refuse_commit ON packets');
    }
    expect(await complete(last)).toEqual([last]);
    await expect.poll(() => listener.heard.length).toBe(1);
    await listener.settled();
    // Had the rolled-back NOTIFY gone out, it would have arrived first.
    expect(listener.heard).toEqual([{ packet: String(last), complete: true }]);
  });

  it('the watch publishes packetSynced, and after its connection is killed reads what completed meanwhile', async () => {
    const events = createPacketEvents();
    const received: number[] = [];
    const stream = events.subscribe('packetSynced')[Symbol.asyncIterator]();
    const collecting = (async () => {
      for (;;) {
        const next = await stream.next();
        if (next.done) return;
        received.push(next.value as number);
      }
    })();
    const [older, last] = packets.slice(-2) as [number, number];
    const errors: unknown[] = [];
    const rounds: number[] = [];
    let downWork: Promise<unknown> | undefined;
    const watch = watchPostgresPackets({ connectionString: url, display: 'listen_test' }, events, {
      reconnectDelaysMs: [1_500],
      onListening: ({ missed }) => rounds.push(missed),
      onError: (error) => {
        errors.push(error);
        // While the watch is down (it waits 1.5 s before connecting again): two packets complete.
        downWork ??= complete(older).then(() => complete(last));
      },
    });
    try {
      await watch.listening;
      // Complete before the watch began: not announced.
      expect(received).toEqual([]);
      await reopenPacketPostgres(store, last);
      await complete(last);
      await expect.poll(() => received).toEqual([last]);

      await reopenPacketPostgres(store, older);
      await reopenPacketPostgres(store, last);
      const { rows } = await store.pool.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
          WHERE application_name = 'livefeed listen' AND datname = current_database()`,
      );
      expect(rows[0]!.n).toBe(1);
      await expect.poll(() => rounds.length, { timeout: 10_000 }).toBe(2);
      await downWork;
      expect(errors.length).toBeGreaterThan(0);
      expect(rounds).toEqual([0, 2]);
      expect(received).toEqual([last, older, last]);
    } finally {
      await watch.stop();
      await stream.return?.();
      await collecting;
    }
    // Stopped: a packet completed now is not announced, and the connection is gone.
    await reopenPacketPostgres(store, last);
    await complete(last);
    const { rows } = await store.pool.query<{ n: number }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'livefeed listen'",
    );
    expect(rows[0]!.n).toBe(0);
    expect(received).toEqual([last, older, last]);
  }, 30_000);
});

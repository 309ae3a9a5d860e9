/**
 * Subscriptions over a read replica (issue 17: `--db-replica`, subscriptions driven by LISTEN/NOTIFY):
 * a packet is announced when the primary commits it, and a replica replays it a moment later. The
 * subscription waits for its reads to show the packet (ops/packetArrival.ts) instead of reading
 * nothing and leaving the packet's events for the next announcement, an hour later upstream.
 */
import { expect, it } from 'vitest';
import { createGraphql } from '../../../src/http/graphql.js';
import { createPacketEvents } from '../../../src/ops/events.js';
import { createMetrics } from '../../../src/ops/metrics.js';
import { testLogger, testService } from '../../support/harness.js';
import { describePostgres } from '../../support/postgres.js';
import { useReplicaCluster } from '../../support/replicaCluster.js';
import { openSse } from '../../support/sse.js';

type Node = { mbid: string; packet: number };
type Payload<K extends string, T> = { data: Record<K, T> | null; errors?: unknown };

describePostgres('subscriptions over a read replica that replays after the announcement', () => {
  const r = useReplicaCluster('replica_subscriptions');
  const served = () => {
    const events = createPacketEvents();
    const yoga = createGraphql({
      reads: r.replicated.reads,
      readsForRequest: () => r.replicated.forRequest(),
      display: r.store.display,
      service: testService(),
      logger: testLogger(),
      metrics: createMetrics({ processMetrics: false }),
      events,
    });
    const open = <T>(subscription: string) =>
      openSse<T>((url, init) => yoga.fetch(url, init), 'http://livefeed.test', subscription);
    return { events, open };
  };

  it('delivers the announced packet once the replica has replayed it, with no later announcement', async () => {
    const old = (await r.primary.latestPacket())!.number;
    const frontier = (await r.primary.feedFrontier())!;
    const { events, open } = served();
    const changes = await open<Payload<'entityChanged', Node>>(
      'subscription { entityChanged { ... on EntityChange { mbid packet } ... on EntityRemoval { mbid packet } } }',
    );
    const packets = await open<Payload<'packetSynced', { number: number; syncedAt: string | null }>>(
      'subscription { packetSynced { number syncedAt } }',
    );
    await r.standby.pauseReplay();
    let resumed = false;
    try {
      await r.growing.publishUpTo(old + 1);
      await r.sync();
      const newer = (await r.primary.latestPacket())!.number;
      expect(newer).toBe(old + 1);
      expect((await r.replicated.reads.latestPacket())!.number).toBe(old);
      expect(await r.replicated.reads.feedFrontier()).toBe(frontier);
      expect(await r.primary.feedFrontier()).toBeGreaterThan(frontier);
      // Each subscriber attaches on its first read: announce until both are attached, then once more
      // would be a second wake-up, so announce a few times and let the replay come after them.
      for (let i = 0; i < 5; i++) {
        events.publish('packetSynced', newer);
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
      const firstChange = changes.next();
      const firstPacket = packets.next();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await r.standby.resumeReplay();
      resumed = true;
      const packet = await firstPacket;
      expect(packet.errors).toBeUndefined();
      expect(packet.data!.packetSynced).toMatchObject({ number: newer, syncedAt: expect.any(String) });
      const change = await firstChange;
      expect(change.errors).toBeUndefined();
      const expected = await r.primary.readFeedEvents({
        after: { at: 'packetEnd', packet: frontier },
        first: 1,
      });
      expect(change.data!.entityChanged).toEqual({
        mbid: expected.events[0]!.mbid,
        packet: expected.events[0]!.packet,
      });
      expect(expected.events[0]!.packet).toBeGreaterThan(frontier);
    } finally {
      if (!resumed) await r.standby.resumeReplay();
      await changes.close();
      await packets.close();
    }
  }, 60_000);
});

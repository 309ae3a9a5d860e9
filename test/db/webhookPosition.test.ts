import { afterAll, beforeAll, expect, it } from 'vitest';
import { epochPositionText } from '../../src/db/feedPosition.js';
import { tempDir } from '../support/harness.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

/**
 * What a webhook has been sent through (`deliveredPacket`, status, /metrics), on both stores: a
 * position at a packet's end closes that packet even when the filters left every event of it out,
 * so that a filtered webhook that is caught up does not look behind; a position after an event
 * says no more than that event's packet. A retired webhook is no longer to be retried.
 */

describeStores('a webhook delivered through a packet', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const target = { name: 'hook', displayUrl: 'http://127.0.0.1:1/hook', entities: null, mbids: null };
  const at = '2026-11-29T12:00:00.000Z';
  const end = (packet: number) => epochPositionText({ position: { at: 'packetEnd', packet }, epoch: 0 });
  const afterChange = epochPositionText({ position: { at: 'change', id: 799297977188353 }, epoch: 0 });
  const state = async (name = 'hook') => (await db.webhooks.states()).find((s) => s.name === name);

  beforeAll(async () => {
    data = await tempDir();
    db = await stores.create(data.dir);
    await db.webhooks.register([target, { ...target, name: 'other' }], at);
  });
  afterAll(async () => {
    await db?.close();
    await data?.cleanup();
  });

  it('moves past a packet whose events the filters left out', async () => {
    await db.webhooks.recordDelivered('hook', { cursor: afterChange, packet: 186101, events: 3, at });
    expect(await state()).toMatchObject({ cursor: afterChange, deliveredPacket: 186101 });
    await db.webhooks.recordPosition('hook', end(186122));
    expect(await state()).toMatchObject({ cursor: end(186122), deliveredPacket: 186122 });
  });

  it('counts the packet a 2xx ends at, past the last event sent', async () => {
    await db.webhooks.recordDelivered('hook', { cursor: end(186130), packet: 186125, events: 1, at });
    expect(await state()).toMatchObject({ deliveredPacket: 186130 });
    // A position after an event: that event's packet, no more.
    await db.webhooks.recordDelivered('other', { cursor: afterChange, packet: 186101, events: 1, at });
    expect(await state('other')).toMatchObject({ deliveredPacket: 186101 });
  });

  it('is no longer to be retried once retired', async () => {
    await db.webhooks.recordFailed('other', {
      error: 'HTTP 503',
      at,
      nextRetryAt: '2026-11-29T12:05:00.000Z',
    });
    expect(await state('other')).toMatchObject({ attempts: 1, nextRetryAt: expect.any(String) });
    await db.webhooks.register([target], at);
    expect(await state('other')).toMatchObject({ retiredAt: expect.any(String), nextRetryAt: null });
  });
});

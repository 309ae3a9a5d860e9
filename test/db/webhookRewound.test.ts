import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../support/harness.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

/**
 * `recordRewound` on both stores (db/webhookQueries.ts, db/postgres/webhooks.ts): the cursor always
 * moves to the position given; what the webhook has been sent moves back to the packet before the
 * one sent again, and only back: a webhook that had not been sent that far keeps its count.
 */

describeStores('a webhook rewound', (stores) => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const target = { name: 'hook', displayUrl: 'http://127.0.0.1:1/hook', entities: null, mbids: null };
  const at = '2026-11-29T12:00:00.000Z';
  const state = async () => (await db.webhooks.states()).find((s) => s.name === 'hook');

  beforeAll(async () => {
    data = await tempDir();
    db = await stores.create(data.dir);
    await db.webhooks.register([target], at);
  });
  afterAll(async () => {
    await db?.close();
    await data?.cleanup();
  });

  it('moves what it has been sent back to the packet before the one sent again', async () => {
    await db.webhooks.recordDelivered('hook', { cursor: 'after-186020', packet: 186020, events: 40, at });
    await db.webhooks.recordRewound('hook', 'start-186010', 186010);
    expect(await state()).toMatchObject({ cursor: 'start-186010', deliveredPacket: 186009 });
  });

  it('keeps what it has been sent when that lies before the packet sent again', async () => {
    await db.webhooks.recordRewound('hook', 'start-186015', 186015);
    expect(await state()).toMatchObject({ cursor: 'start-186015', deliveredPacket: 186009 });
  });

  it('keeps a webhook that has been sent nothing at nothing', async () => {
    await db.webhooks.register([target, { ...target, name: 'fresh' }], at);
    await db.webhooks.recordRewound('fresh', 'start-186015', 186015);
    const fresh = (await db.webhooks.states()).find((s) => s.name === 'fresh');
    expect(fresh).toMatchObject({ cursor: 'start-186015', deliveredPacket: null });
  });
});

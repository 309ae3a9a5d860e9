import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SqliteSyncStore } from '../../src/sync/syncStore.js';
import { tempDir } from '../support/harness.js';
import { SQLITE_STORES, type TestDatabase } from '../support/stores.js';

/**
 * The SQLite webhook store shares its connection with the sync in follow mode (db/webhookStore.ts):
 * each read and write waits until no transaction is open on it, so delivery never reads a dump
 * before its COMMIT nor writes its position inside a transaction that may roll back.
 */

let data: Awaited<ReturnType<typeof tempDir>>;
let db: TestDatabase;

beforeAll(async () => {
  data = await tempDir();
  db = await SQLITE_STORES.create(data.dir);
  const target = { name: 'hook', displayUrl: 'http://127.0.0.1:1/hook', entities: null, mbids: null };
  await db.webhooks.register([target], new Date().toISOString());
});
afterAll(async () => {
  await db?.close();
  await data?.cleanup();
});

it('waits for an open transaction to end, and writes outside it', async () => {
  const { sqlite } = db.store as SqliteSyncStore;
  sqlite.exec('BEGIN IMMEDIATE');
  let settled = false;
  const write = db.webhooks.recordPosition('hook', 'p186000').then(() => {
    settled = true;
  });
  const read = db.webhooks.states();
  await sleep(80);
  expect(settled).toBe(false);
  // The transaction rolls back, as a dump's does when its signature fails: the position stays.
  sqlite.exec('ROLLBACK');
  await write;
  const [state] = await read;
  expect(state).toMatchObject({ name: 'hook', cursor: 'p186000' });
  expect((await db.webhooks.states())[0]).toMatchObject({ cursor: 'p186000' });
});

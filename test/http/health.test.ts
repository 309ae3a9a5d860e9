import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import { sqliteReads } from '../../src/db/reads.js';
import { notReadyReason } from '../../src/http/health.js';
import { tempDir, testApp } from '../support/harness.js';
import { listen } from '../support/listen.js';
import { type SyncedDatabase, syncedDatabase } from '../support/synced.js';

async function get(app: ReturnType<typeof testApp>, path: string, method = 'GET') {
  const server = await listen(app.handle);
  try {
    const response = await fetch(`${server.origin}${path}`, { method });
    return {
      status: response.status,
      body: await response.text(),
      type: response.headers.get('content-type'),
    };
  } finally {
    await server.close();
  }
}

describe('/health and /ready', () => {
  let synced: SyncedDatabase;
  beforeAll(async () => {
    synced = await syncedDatabase();
  });
  afterAll(() => synced.cleanup());

  it('/health answers ok whatever the database holds', async () => {
    const empty = await tempDir();
    const app = testApp(`${empty.dir}/livefeed.db`, empty.dir);
    expect(await get(app, '/health')).toEqual({
      status: 200,
      body: 'ok\n',
      type: 'text/plain; charset=utf-8',
    });
    expect((await get(app, '/health', 'HEAD')).status).toBe(200);
    expect((await get(app, '/health', 'POST')).status).toBe(405);
    app.store.close();
    await empty.cleanup();
  });

  it('/ready is 503 with the reason on an empty database', async () => {
    const empty = await tempDir();
    const app = testApp(`${empty.dir}/livefeed.db`, empty.dir);
    expect(await get(app, '/ready')).toMatchObject({
      status: 503,
      body: 'not ready: no packet synced yet\n',
    });
    app.store.close();
    await empty.cleanup();
  });

  it('/ready is 200 once a packet is synced, however old the data (staleness is not unreadiness)', async () => {
    const app = testApp(synced.dbPath, synced.dir);
    expect(await get(app, '/ready')).toMatchObject({ status: 200, body: 'ready\n' });
    // The bundled packets are from May 2026: far past the CRITICAL threshold, still ready.
    const freshness = await get(app, '/freshness');
    expect(freshness.body).toMatch(/^CRITICAL: /);
    app.store.close();
  });

  it('/ready names migrations that are not applied', async () => {
    const data = await tempDir();
    const store = openStore(`${data.dir}/livefeed.db`);
    store.sqlite
      .prepare(
        'DELETE FROM __drizzle_migrations WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)',
      )
      .run();
    expect(await notReadyReason({ reads: sqliteReads(store), display: store.path })).toMatch(
      /^database .*livefeed\.db: 1 of \d+ migrations not applied$/,
    );
    store.close();
    await data.cleanup();
  });

  it('/ready says the database is not open once it is closed', async () => {
    const app = testApp(synced.dbPath, synced.dir);
    app.store.close();
    const answer = await get(app, '/ready');
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^not ready: database .*livefeed\.db is not open: /);
  });
});

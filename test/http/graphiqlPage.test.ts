import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { sqliteReads } from '../../src/db/reads.js';
import { createApp } from '../../src/http/app.js';
import { exampleQuery } from '../../src/http/exampleQuery.js';
import { testLogger, testService } from '../support/harness.js';
import { type Listening, listen } from '../support/listen.js';
import { rawRequest } from '../support/rawHttp.js';
import { type SyncedDatabase, syncedDatabase } from '../support/synced.js';

const HTML = { accept: 'text/html,application/xhtml+xml' };

describe('GraphiQL page over real HTTP: compressed, cacheable; / redirects', () => {
  let synced: SyncedDatabase;
  let store: Store;
  let server: Listening;

  beforeAll(async () => {
    synced = await syncedDatabase();
    store = openStore(synced.dbPath);
    server = await listen(
      createApp({ store, service: testService(), logger: testLogger(), dataDir: synced.dir }).handle,
    );
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    store?.close();
    await synced?.cleanup();
  });

  it('is sent br or gzip by Accept-Encoding, a fraction of its size, with an ETag that answers 304', async () => {
    const plain = await rawRequest(server.origin, '/graphql', { headers: HTML });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(5_000_000);
    for (const [encoding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const page = await rawRequest(server.origin, '/graphql', {
        headers: { ...HTML, 'accept-encoding': encoding === 'br' ? 'gzip, deflate, br' : 'gzip' },
      });
      expect(page.status).toBe(200);
      expect(page.headers['content-encoding']).toBe(encoding);
      expect(page.headers.vary).toMatch(/Accept-Encoding/);
      expect(page.headers['cache-control']).toBe('no-cache');
      expect(page.body.length).toBeLessThan(plain.body.length / 3);
      expect(decode(page.body).equals(plain.body)).toBe(true);
      const again = await rawRequest(server.origin, '/graphql', {
        headers: { ...HTML, 'accept-encoding': encoding, 'if-none-match': String(page.headers.etag) },
      });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
    }
  });

  it('opens on an example made from the data: the newest packet with changes and an entity history', async () => {
    const page = (await rawRequest(server.origin, '/graphql', { headers: HTML })).body.toString('utf8');
    expect(page).toContain('packet(number: 186123)');
    expect(page).toContain('entity: LABEL');
    expect(page).toContain('entity: RECORDING');
    expect(page).toMatch(/entity\(mbid: \\"[0-9a-f-]{36}\\"\)/);
    expect(page).toContain('current { __typename name');
  });

  it('the example query answers without errors, the entity typed', async () => {
    const response = await fetch(`${server.origin}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: await exampleQuery(sqliteReads(store)) }),
    });
    const answer = (await response.json()) as {
      data: { entity: { current: { __typename: string } } };
      errors?: unknown;
    };
    expect(answer.errors).toBeUndefined();
    expect(answer.data.entity.current.__typename).toMatch(/^[A-Z]\w+$/);
  });

  it('GET / redirects to /graphql, keeping a shared query', async () => {
    const root = await rawRequest(server.origin, '/?query=%7B__typename%7D');
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe('/graphql?query=%7B__typename%7D');
  });
});

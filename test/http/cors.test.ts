import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/db/client.js';
import { createApp } from '../../src/http/app.js';
import { tempDir, testLogger, testService } from '../support/harness.js';

const ALLOWED = 'https://app.example.org';

function app(store: Store, dir: string, corsOrigins?: string[]) {
  return createApp({ store, service: testService(), logger: testLogger(), dataDir: dir, corsOrigins });
}

describe('CORS allow-list (LIVEFEED_CORS_ORIGINS)', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  beforeAll(async () => {
    data = await tempDir();
    store = openStore(`${data.dir}/livefeed.db`);
  });
  afterAll(async () => {
    store.close();
    await data.cleanup();
  });

  it('reads the comma list from the environment', () => {
    expect(
      loadConfig({}, { LIVEFEED_CORS_ORIGINS: ` ${ALLOWED}, http://localhost:5173 ,` }).corsOrigins,
    ).toEqual([ALLOWED, 'http://localhost:5173']);
    expect(loadConfig({}, {}).corsOrigins).toEqual([]);
  });

  it('answers a preflight from a listed origin and allows its POST', async () => {
    const { yoga } = app(store, data.dir, [ALLOWED, 'http://localhost:5173']);
    const preflight = await yoga.fetch('http://livefeed.test/graphql', {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(preflight.headers.get('access-control-allow-credentials')).not.toBe('true');
    const post = await yoga.fetch('http://livefeed.test/graphql', {
      method: 'POST',
      headers: { origin: ALLOWED, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ service { version } }' }),
    });
    expect(post.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(await post.json()).toEqual({ data: { service: { version: 'test' } } });
  });

  it('gives an origin not on the list no CORS grant', async () => {
    const { yoga } = app(store, data.dir, [ALLOWED]);
    const response = await yoga.fetch('http://livefeed.test/graphql', {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ service { version } }' }),
    });
    expect(response.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    expect(response.headers.get('access-control-allow-origin')).not.toBe('*');
  });

  it('sends no CORS headers at all without a list (same origin only)', async () => {
    const { yoga } = app(store, data.dir);
    const response = await yoga.fetch('http://livefeed.test/graphql', {
      method: 'OPTIONS',
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST' },
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

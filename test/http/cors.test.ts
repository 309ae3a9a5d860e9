import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStore, type Store } from '../../src/db/client.js';
import { createApp } from '../../src/http/app.js';
import { tempDir, testLogger, testService } from '../support/harness.js';

const ALLOWED = 'https://app.example.org';

function app(store: Store, dir: string, corsOrigins?: string[], logLines?: string[]) {
  return createApp({
    store,
    service: testService(),
    logger: testLogger(logLines),
    dataDir: dir,
    corsOrigins,
  });
}

function preflight(yoga: ReturnType<typeof app>['yoga'], origin: string) {
  return yoga.fetch('http://livefeed.test/graphql', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    },
  });
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

  it('refuses the preflight of an origin not listed with 403, naming the origin and the variable, and warns once', async () => {
    for (const list of [undefined, [ALLOWED]]) {
      const lines: string[] = [];
      const { yoga } = app(store, data.dir, list, lines);
      for (let i = 0; i < 2; i++) {
        const refused = await preflight(yoga, 'http://localhost:5173');
        expect(refused.status).toBe(403);
        expect(refused.headers.get('access-control-allow-origin')).toBeNull();
        const body = (await refused.json()) as {
          errors: { message: string; extensions: { code: string } }[];
        };
        expect(body.errors[0]!.extensions.code).toBe('CORS_NOT_ALLOWED');
        expect(body.errors[0]!.message).toBe(
          'cross-origin requests from http://localhost:5173 are not allowed: add the origin to LIVEFEED_CORS_ORIGINS (README, Configuration)',
        );
      }
      const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.event === 'cors-refused');
      expect(warnings).toEqual([expect.objectContaining({ origin: 'http://localhost:5173', level: 40 })]);
    }
    // A listed origin's preflight still gets its grant, and `*` lets every origin in.
    const { yoga } = app(store, data.dir, [ALLOWED]);
    expect((await preflight(yoga, ALLOWED)).headers.get('access-control-allow-origin')).toBe(ALLOWED);
    const open = await preflight(app(store, data.dir, ['*']).yoga, 'http://localhost:5173');
    expect(open.status).toBeLessThan(300);
    expect(open.headers.get('access-control-allow-origin')).not.toBeNull();
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

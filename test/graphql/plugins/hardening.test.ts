import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse, validate } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/db/client.js';
import { sqliteReads } from '../../../src/db/reads.js';
import { operationCost } from '../../../src/graphql/plugins/cost.js';
import { hardeningPlugin } from '../../../src/graphql/plugins/hardening.js';
import { queryShapeRule } from '../../../src/graphql/plugins/limits.js';
import { schema } from '../../../src/graphql/schema.js';
import { type App, createApp } from '../../../src/http/app.js';
import { type GqlResult, gql, tempDir, testLogger, testService } from '../../support/harness.js';

/** Issue 5, hostile queries: clear errors with a code, and the server keeps serving. */

let data: Awaited<ReturnType<typeof tempDir>>;
let store: Store;
let app: App;
const logs: string[] = [];

async function post(
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: GqlResult }> {
  const response = await app.yoga.fetch('http://livefeed.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body,
  });
  return { status: response.status, json: (await response.json()) as GqlResult };
}

const codes = (result: GqlResult) => (result.errors ?? []).map((e) => e.extensions?.code);

beforeAll(async () => {
  data = await tempDir('lf-hardening-');
  store = openStore(join(data.dir, 'livefeed.db'));
  store.sqlite
    .prepare(
      'INSERT INTO packets (number, timestamp, schema_sequence, synced_at, created_at) VALUES (?, ?, ?, ?, ?)',
    )
    .run(7, '2026-05-11T21:14:26Z', 31, '2026-05-11T22:00:00Z', '2026-05-11T22:00:00Z');
  app = createApp({ store, service: testService(), logger: testLogger(logs), dataDir: data.dir });
});

afterAll(async () => {
  store.close();
  await data.cleanup();
});

describe('GraphQL limits', () => {
  it('rejects operations nested deeper than the limit, also through fragments, and survives fragment cycles', () => {
    const rule = queryShapeRule({ maxDepth: 3, maxAliases: 30, maxDirectives: 50, maxCost: 1e9 });
    const deep = parse(
      'fragment D on Packet { dumps { changes { nodes { mbid } } } } { packet(number: 1) { ...D } }',
    );
    expect(validate(schema, deep, [rule]).map((e) => e.extensions.code)).toEqual(['QUERY_TOO_DEEP']);
    expect(validate(schema, parse('{ packet(number: 1) { dumps { entity } } }'), [rule])).toEqual([]);
    // Introspection does not count: GraphiQL's own query is deep.
    const introspection = parse('{ __schema { types { fields { type { ofType { ofType { name } } } } } } }');
    expect(validate(schema, introspection, [rule])).toEqual([]);
    const cyclic = parse(
      'fragment A on Packet { dumps { changes { nodes { mbid } } } ...B } fragment B on Packet { ...A } { packet(number: 1) { ...A } }',
    );
    expect(validate(schema, cyclic, [rule]).map((e) => e.extensions.code)).toContain('QUERY_TOO_DEEP');
  });

  it('rejects too many aliases and directives', async () => {
    const aliases = `{ ${Array.from({ length: 31 }, (_, i) => `s${i}: service { version }`).join(' ')} }`;
    expect(codes(await gql(app, aliases))).toEqual(['TOO_MANY_ALIASES']);
    const directives = `{ service { ${Array.from({ length: 51 }, () => 'version @include(if: true)').join(' ')} } }`;
    expect(codes(await gql(app, directives))).toEqual(['TOO_MANY_DIRECTIVES']);
  });

  it('answers a selection that repeats a field past what validation checks with a coded reason', async () => {
    // graphql-js gives up on such a document with "Validation aborted." and no code.
    const repeated = await gql(app, `{ ${Array.from({ length: 1200 }, () => '__typename').join(' ')} }`);
    expect(codes(repeated)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(repeated.errors![0]!.message).toContain('repeats fields too often');
    const few = await gql(app, `{ ${Array.from({ length: 50 }, () => '__typename').join(' ')} }`);
    expect(few).toEqual({ data: { __typename: 'Query' } });
  });

  it('estimates cost from page sizes and rejects what is over the limit, variables included', async () => {
    const cost = (q: string, v?: Record<string, unknown>) => operationCost(schema, parse(q), v);
    expect(cost('{ service { version } }')).toBe(2);
    expect(cost('{ packets(first: 10) { nodes { number } } }')).toBe(10 * (1 + 1 * (1 + 1)));
    expect(cost('{ packets { nodes { dumps { entity } } } }')).toBe(20 * (1 + 1 * (1 + 11 * (1 + 1))));
    expect(cost('query($n: Int) { packets(first: $n) { totalCount } }', { n: 3 })).toBe(3 * 2);
    const heavy =
      'query($n: Int) { packets(first: $n) { nodes { dumps { changes(first: $n) { nodes { data } } } } } }';
    const rejected = await gql(app, heavy, { n: 500 });
    expect(codes(rejected)).toEqual(['QUERY_TOO_COMPLEX']);
    expect(rejected.errors![0]!.message).toMatch(/query cost \d+ is over the limit of 50000/);
    expect((await gql(app, heavy, { n: 5 })).errors).toBeUndefined();
    // The message names the dearest top-level field, with its cost, and points at it.
    const mixed = `{ service { version }\n  big: packets(first: 500) { nodes { dumps { changes(first: 500) { nodes { data } } } } } }`;
    const named = await gql(app, mixed);
    const total = operationCost(schema, parse(mixed));
    expect(named.errors![0]).toMatchObject({
      message:
        `query cost ${total} is over the limit of 50000 (\`big\` costs ${total - 2}); ask for smaller pages: ` +
        'each list counts its `first` (default 20) and nested lists multiply (README, Integrity and reliability: Hostile queries)',
      locations: [{ line: 2, column: 3 }],
      extensions: { code: 'QUERY_TOO_COMPLEX', cost: total, max: 50000 },
    });
  });

  it('keeps the page size limit and answers malformed cursors and arguments with codes', async () => {
    expect(codes(await gql(app, '{ packets(first: 501) { totalCount } }'))).toEqual(['PAGE_SIZE_EXCEEDED']);
    for (const field of ['packets', 'quarantine', 'failures']) {
      expect(codes(await gql(app, `{ ${field}(after: "bm9wZQ") { totalCount } }`)), field).toEqual([
        'BAD_CURSOR',
      ]);
    }
    expect(codes(await gql(app, '{ quarantine(packet: -4) { totalCount } }'))).toEqual(['INVALID_PACKET']);
    expect(
      codes(await gql(app, 'query($n: Int!) { packet(number: $n) { number } }', { n: 'seven' })),
    ).toEqual(['BAD_USER_INPUT']);
    expect(codes(await gql(app, '{ packet(number: "seven") { number } }'))).toEqual([
      'GRAPHQL_VALIDATION_FAILED',
    ]);
    expect(codes(await gql(app, '{ packet(number: 7 { number } }'))).toEqual(['GRAPHQL_PARSE_FAILED']);
  });

  it('limits the request body and the number of tokens', async () => {
    const big = await post(
      JSON.stringify({ query: '{ service { version } }', padding: 'x'.repeat(200_000) }),
    );
    expect(big.status).toBe(413);
    expect(codes(big.json)).toEqual(['PAYLOAD_TOO_LARGE']);
    // Without a Content-Length the limit holds while reading.
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 30; i++) controller.enqueue(new TextEncoder().encode(' '.repeat(10_000)));
        controller.close();
      },
    });
    const chunked = await app.yoga.fetch('http://livefeed.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    const tokens = `{ ${'service { version } '.repeat(2500)} }`;
    const tooMany = await gql(app, tokens);
    expect(codes(tooMany)).toEqual(['TOO_MANY_TOKENS']);
    expect(tooMany.errors![0]!.message).toBe(
      'the document has more than 10000 tokens (names, punctuation and values); send a smaller one',
    );
    expect(tooMany.errors![0]!.extensions).toMatchObject({ max: 10_000 });
    // Still serving.
    expect((await gql(app, '{ packet(number: 7) { number } }')).data).toEqual({ packet: { number: 7 } });
  });

  it('over HTTP: a declared length over the limit is refused unread; a chunked body is read under it, then answered', async () => {
    const server = createServer(app.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    try {
      // fetch declares the length: parsed as sent when within the limit, refused when over it.
      const small = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: '{ packet(number: 7) { number } }' }),
      });
      expect(await small.json()).toEqual({ data: { packet: { number: 7 } } });
      const padding = 'x'.repeat(150_000);
      const big = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: '{ __typename }', padding }),
      });
      expect(big.status).toBe(413);
      expect(codes((await big.json()) as GqlResult)).toEqual(['PAYLOAD_TOO_LARGE']);
      // Without a Content-Length (chunked), the body is read under the limit, then parsed.
      const postChunked = (parts: string[]) =>
        new Promise<{ status: number; json: GqlResult }>((resolve, reject) => {
          const req = httpRequest(url, { method: 'POST', headers }, (res) => {
            let body = '';
            res.on('data', (c) => {
              body += c;
            });
            res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(body) as GqlResult }));
          });
          req.on('error', reject);
          for (const part of parts) req.write(part);
          req.end();
        });
      const answered = await postChunked(['{"query":', '"{ packet(number: 7) { number } }"}']);
      expect(answered).toEqual({ status: 200, json: { data: { packet: { number: 7 } } } });
      const members = Array.from({ length: 15 }, () => `"padding":"${'y'.repeat(10_000)}",`);
      const refused = await postChunked(['{', ...members, '"query":"{ __typename }"}']);
      expect(refused.status).toBe(413);
      expect(codes(refused.json)).toEqual(['PAYLOAD_TOO_LARGE']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('stops a request that outruns its time budget with one coded error', async () => {
    let now = 0;
    // Every look at the clock costs 40 ms: the budget of 100 ms runs out after a few fields.
    const yoga = createYoga({
      schema,
      logging: false,
      plugins: [hardeningPlugin({ timeBudgetMs: 100 }, () => (now += 40))],
      context: () => ({
        reads: sqliteReads(store),
        store,
        service: testService(),
        origin: 'http://livefeed.test',
      }),
    });
    const response = await yoga.fetch('http://livefeed.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query: '{ packets(first: 5) { nodes { number timestamp schemaSequence syncedAt } } }',
      }),
    });
    const result = (await response.json()) as GqlResult;
    expect(codes(result)).toEqual(['TIME_BUDGET_EXCEEDED']);
    expect(result.errors![0]!.message).toContain('time budget of 100 ms');
  });

  it('masks an unexpected error, logs it, and keeps serving', async () => {
    const broken = openStore(join(data.dir, 'broken.db'));
    broken.sqlite.exec('DROP TABLE packets');
    const lines: string[] = [];
    const brokenApp = createApp({
      store: broken,
      service: testService(),
      logger: testLogger(lines),
      dataDir: data.dir,
    });
    try {
      const result = await gql(brokenApp, '{ packet(number: 7) { number } }');
      expect(result.errors).toEqual([
        expect.objectContaining({
          message: 'Unexpected error.',
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        }),
      ]);
      expect(JSON.stringify(result)).not.toContain('no such table');
      expect(lines.some((l) => l.includes('graphql-error') && l.includes('no such table: packets'))).toBe(
        true,
      );
      expect((await gql(brokenApp, '{ service { version } }')).data).toEqual({
        service: { version: 'test' },
      });
    } finally {
      broken.close();
    }
  });
});

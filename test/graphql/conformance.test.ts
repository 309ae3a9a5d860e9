import { type AuditResult, serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { createApp } from '../../src/http/app.js';
import { tempDir, testLogger, testService } from '../support/harness.js';
import { type Listening, listen } from '../support/listen.js';

// GraphQL over HTTP (https://graphql.github.io/graphql-over-http/): graphql-http's audits against
// livefeed's own HTTP handler (routes first, then Yoga) on a real server.
describe('GraphQL-over-HTTP conformance (graphql-http serverAudits)', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  let server: Listening;
  const results: { name: string; result: AuditResult }[] = [];

  beforeAll(async () => {
    data = await tempDir();
    store = openStore(`${data.dir}/livefeed.db`);
    server = await listen(
      createApp({ store, service: testService(), logger: testLogger(), dataDir: data.dir }).handle,
    );
    for (const audit of serverAudits({ url: `${server.origin}/graphql`, fetchFn: fetch })) {
      results.push({ name: audit.name, result: await audit.fn() });
    }
  });
  afterAll(async () => {
    await server.close();
    store.close();
    await data.cleanup();
  });

  it('runs the audits', () => {
    expect(results.filter((r) => r.name.startsWith('MUST')).length).toBeGreaterThan(10);
  });

  it('passes every MUST', () => {
    const failed = results
      .filter((r) => r.name.startsWith('MUST') && r.result.status !== 'ok')
      .map((r) => `${r.name}: ${r.result.status === 'ok' ? '' : r.result.reason}`);
    expect(failed).toEqual([]);
  });

  it('reports how many SHOULDs pass (informational)', () => {
    const should = results.filter((r) => r.name.startsWith('SHOULD'));
    const notOk = should.filter((r) => r.result.status !== 'ok').map((r) => r.name);
    // Not a requirement of the issue; printed so a regression is visible in the test log.
    console.info(
      `graphql-http: ${should.length - notOk.length}/${should.length} SHOULD audits ok${notOk.length ? `; not ok: ${notOk.join(' | ')}` : ''}`,
    );
    expect(should.length).toBeGreaterThan(0);
  });
});

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../src/samplefeed/server.js';
import { REPO_ROOT } from './support/cli.js';
import { gql, tempDir, testApp } from './support/harness.js';
import { syncVerified } from './support/synced.js';

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
const GRAPHQL_EXAMPLES = [...README.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
/** Shell lines of the README that read the database with sqlite3 (`sqlite3 data/demo.db '...'`). */
const SQLITE_EXAMPLES = [...README.matchAll(/^sqlite3 -\S+ -\S+ data\/demo\.db "(.+)"$/gm)].map((m) => m[1]!);

/** True when a top-level answer holds data: not null, not an empty list or empty page. */
function holdsData(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object' && 'nodes' in value) return (value as { nodes: unknown[] }).nodes.length > 0;
  return true;
}

describe('the README examples return data on the demo database', () => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let app: ReturnType<typeof testApp>;
  let demoDb: string;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    // What `npm start` syncs without a token: the bundled feed, replication packets included.
    const dbPath = await syncVerified(feed.feedRoot, data.dir, { replicationPackets: true });
    demoDb = dbPath;
    app = testApp(dbPath, data.dir, { demo: true });
  }, 120_000);
  afterAll(async () => {
    app?.store.close();
    await feed?.close();
    await data?.cleanup();
  });

  it('the README has GraphQL and sqlite3 examples', () => {
    expect(GRAPHQL_EXAMPLES.length).toBeGreaterThanOrEqual(2);
    expect(SQLITE_EXAMPLES.length).toBeGreaterThanOrEqual(1);
  });

  it.each(GRAPHQL_EXAMPLES.map((query, i) => [i + 1, query]))(
    'GraphQL example %i: every field answers data',
    async (_n, query) => {
      const { data: answer, errors } = await gql(app, query as string);
      expect(errors).toBeUndefined();
      for (const [field, value] of Object.entries(answer ?? {})) {
        expect(holdsData(value), `${field}: ${JSON.stringify(value)}`).toBe(true);
      }
    },
  );

  it.each(SQLITE_EXAMPLES.map((sql, i) => [i + 1, sql]))('sqlite3 example %i returns rows', (_n, sql) => {
    const out = execFileSync('sqlite3', ['-header', '-column', demoDb, sql as string], { encoding: 'utf8' });
    expect(out.trim().split('\n').length, out).toBeGreaterThan(2);
  });
});

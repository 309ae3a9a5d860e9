import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { startSync } from '../support/cli.js';
import { halfDumps } from '../support/dbSnapshot.js';
import { tempDir, testApp } from '../support/harness.js';
import { serveApp } from '../support/serveApp.js';
import { syntheticMbid, writeSyntheticFeed } from '../support/syntheticFeed.js';

/**
 * Issue 5, readers during a sync: concurrent GraphQL clients over loopback HTTP while a real
 * `livefeed sync` process writes the same database. Bounded in time and count; asserts that no
 * request fails and that no half-stored dump is ever visible. Latency is reported, not asserted
 * (the benchmark owns p99).
 */

const ENTITIES: EntityType[] = ['area', 'work'];
const FIRST = 900;
const CLIENTS = 6;
const MAX_REQUESTS = 4000;
const MAX_MS = 30_000;

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;

beforeAll(async () => {
  work = await tempDir('lf-load-');
  await writeSyntheticFeed(join(work.dir, 'feed'), {
    firstPacket: FIRST,
    packets: 4,
    entities: ENTITIES,
    linesPerDump: 3000,
    malformedEvery: 101,
  });
  feed = await startSampleFeed({ root: join(work.dir, 'feed') });
}, 90_000);

afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

const QUERIES: { query: string; variables?: () => Record<string, unknown> }[] = [
  {
    query:
      '{ latestPacket { number dumps { entity status changeCount changes(first: 20) { nodes { mbid name } } } } }',
  },
  {
    query:
      '{ packets(first: 10) { totalCount nodes { number syncedAt dumps { status changeCount quarantineCount } } } }',
  },
  {
    query:
      'query($p: Int!) { changes(packet: $p, entity: WORK, first: 100) { totalCount pageInfo { endCursor } nodes { position data } } }',
    variables: () => ({ p: FIRST + Math.floor(Math.random() * 4) }),
  },
  {
    query: 'query($m: ID!) { entity(mbid: $m) { mbid type latest { packet position name } } }',
    variables: () => ({
      m: syntheticMbid(FIRST + Math.floor(Math.random() * 4), 'area', 1 + Math.floor(Math.random() * 3000)),
    }),
  },
  {
    query:
      '{ quarantine(first: 5) { totalCount nodes { packet entity line reason } } failures { totalCount } }',
  },
];

describe('GraphQL readers while a sync writes', () => {
  it('answers every request, and never shows half a dump', async () => {
    const dataDir = join(work.dir, 'data');
    const dbPath = join(dataDir, 'livefeed.db');
    openStore(dbPath).close();
    const app = testApp(dbPath, dataDir, { entities: ENTITIES });
    const server = await serveApp(app);
    const url = `${server.origin}/graphql`;

    const sync = startSync(feed.feedRoot, dataDir, [
      '--once',
      '--entities',
      ENTITIES.join(','),
      '--from',
      String(FIRST),
    ]);
    let syncing = true;
    void sync.exited.then(() => {
      syncing = false;
    });

    // Readers start once the sync is about to write; they stop when it ends.
    await sync.waitForEvent('sync-start');
    const started = performance.now();
    const latencies: number[] = [];
    const failures: string[] = [];
    const halfSeen: string[] = [];
    let sent = 0;
    const more = () => syncing && sent < MAX_REQUESTS && performance.now() - started < MAX_MS;
    const client = async () => {
      while (more()) {
        const { query, variables } = QUERIES[sent++ % QUERIES.length]!;
        const at = performance.now();
        try {
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ query, variables: variables?.() }),
          });
          const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
          // A packet the sync has not stored yet is NOT_FOUND (or PENDING), never an empty page.
          const unexpected = body.errors?.filter(
            (e) =>
              !(
                query.includes('changes(packet') &&
                ['NOT_FOUND', 'PENDING'].includes(e.extensions?.code ?? '')
              ),
          );
          if (response.status !== 200 || unexpected?.length)
            failures.push(`${response.status} ${JSON.stringify(body).slice(0, 300)}`);
        } catch (error) {
          failures.push(String(error));
        }
        latencies.push(performance.now() - at);
      }
    };
    const watcher = async () => {
      while (more()) {
        halfSeen.push(...halfDumps(dbPath));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    try {
      await Promise.all([...Array.from({ length: CLIENTS }, client), watcher()]);
      const exit = await sync.exited;
      expect(exit.code, sync.stderr.join('\n')).toBe(0);
    } finally {
      if (sync.child.exitCode === null) sync.child.kill('SIGKILL');
      await server.close();
      app.store.close();
    }
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? 0;
    console.info(
      `load test: ${latencies.length} requests from ${CLIENTS} clients during the sync, ${failures.length} failed, ` +
        `p50 ${Math.round(latencies[Math.floor(latencies.length / 2)] ?? 0)} ms, p99 ${Math.round(p99)} ms`,
    );
    expect(failures).toEqual([]);
    expect(halfSeen).toEqual([]);
    expect(latencies.length).toBeGreaterThan(0);
    // The sync really wrote while the readers read: every dump arrived after they started.
    expect(sync.events().filter((e) => e.event === 'dump-stored')).toHaveLength(4 * ENTITIES.length);
    expect(halfDumps(dbPath)).toEqual([]);
  }, 90_000);
});

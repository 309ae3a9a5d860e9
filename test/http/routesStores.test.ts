import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FeedClient } from '../../src/feed/client.js';
import { createApp } from '../../src/http/app.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { describeAppStores } from '../support/appStores.js';
import { syncContextOn, tempDir, testLogger, testService } from '../support/harness.js';
import { listen } from '../support/listen.js';
import { readBundledManifest } from '../support/manifest.js';
import { rawRequest } from '../support/rawHttp.js';

/**
 * The HTTP routes beside GraphQL on both stores (issue 17, docs/POSTGRES_PORT.md step 8): the same
 * bodies against `createApp` over a SQLite file and over a PostgreSQL database (no SQLite store
 * behind it), both filled by their own sync writer from the bundled sample feed. A second app over
 * the same database with an empty data folder is a `serve` on another machine: the kept archives
 * are on the syncing node's disk only, so it fetches them from the feed or answers 410.
 */

const manifest = readBundledManifest();
let feed: SampleFeed;

beforeAll(async () => {
  feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
});
afterAll(async () => {
  await feed?.close();
});

/** Value of one sample line `name{labels} value` in a Prometheus text exposition. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describeAppStores(
  'HTTP routes over the store',
  async (writer, dir) => {
    const ctx = await syncContextOn(writer, {
      feedRoot: feed.feedRoot,
      dataDir: dir,
      replicationPackets: true,
    });
    try {
      expect((await syncOnce(ctx, { from: manifest.firstPacket })).problems).toEqual([]);
    } finally {
      await ctx.feed.client.close();
    }
  },
  (_kind, app) => {
    const get = async (path: string, init?: RequestInit) => {
      const server = await listen(app().app.handle);
      try {
        const response = await fetch(`${server.origin}${path}`, init);
        return {
          status: response.status,
          body: await response.text(),
          type: response.headers.get('content-type'),
        };
      } finally {
        await server.close();
      }
    };

    it('/health and /ready: ready once a packet is synced', async () => {
      expect(await get('/health')).toMatchObject({ status: 200, body: 'ok\n' });
      expect(await get('/ready')).toMatchObject({ status: 200, body: 'ready\n' });
    });

    it('/freshness: the newest complete packet, its age and the level, as text and JSON', async () => {
      const text = await get('/freshness');
      // The bundled packets are from May 2026: far past the CRITICAL threshold.
      expect(text.status).toBe(503);
      expect(text.body).toMatch(new RegExp(`^CRITICAL: newest local packet is ${manifest.lastPacket} of `));
      const json = JSON.parse((await get('/freshness?format=json')).body) as Record<string, unknown>;
      expect(json).toMatchObject({
        level: 'CRITICAL',
        localLatest: manifest.lastPacket,
        lagPackets: 0,
        upstreamLatest: manifest.lastPacket,
        waitingForDumps: null,
      });
    });

    it('/metrics: position, unfinished files and quarantine read from the database at scrape time', async () => {
      const text = (await get('/metrics')).body;
      expect(sample(text, 'livefeed_local_latest_packet')).toBe(manifest.lastPacket);
      expect(sample(text, 'livefeed_upstream_latest_packet')).toBe(manifest.lastPacket);
      expect(sample(text, 'livefeed_lag_packets')).toBe(0);
      expect(sample(text, 'livefeed_local_packet_age_seconds')).toBeGreaterThan(0);
      expect(sample(text, 'livefeed_unfinished_files{status="pending"}')).toBe(0);
      expect(sample(text, 'livefeed_unfinished_files{status="failed"}')).toBe(0);
      expect(sample(text, 'livefeed_db_quarantined_lines')).toBe(0);
      // The newest packet waits for a later packet's JSON dumps; nothing was stored behind readers.
      expect(sample(text, 'livefeed_change_stream_frontier_packet')).toBe(manifest.lastPacket - 1);
      expect(sample(text, 'livefeed_change_stream_epoch')).toBe(0);
      expect(sample(text, 'livefeed_change_stream_last_rewritten_packet')).toBeNaN();
    });

    it('the mirror: replication-info names the newest complete packet; a stored archive byte for byte', async () => {
      const info = await get('/api/musicbrainz/replication-info');
      expect(JSON.parse(info.body)).toEqual({
        last_packet: `replication-${manifest.lastPacket}.tar.bz2`,
        history_from: manifest.firstPacket,
      });
      const [file] = await app().db.rows<{ name: string; sha256: string }>(
        "SELECT name, sha256 FROM feed_files WHERE name LIKE 'json-dumps/%' ORDER BY name LIMIT 1",
      );
      const server = await listen(app().app.handle);
      try {
        const res = await rawRequest(server.origin, `/api/musicbrainz/${file!.name}`);
        expect(res.status).toBe(200);
        expect(createHash('sha256').update(res.body).digest('hex')).toBe(file!.sha256);
        expect(res.body).toEqual(await readFile(join(BUNDLED_FEED_ROOT, file!.name)));
        // Packet 1 lies before any packet synced here: not upstream's 404, which a downstream may settle on.
        expect((await rawRequest(server.origin, '/api/musicbrainz/replication-1-v2.tar.bz2')).status).toBe(
          410,
        );
        const next = `/api/musicbrainz/replication-${manifest.lastPacket + 1}-v2.tar.bz2`;
        expect((await rawRequest(server.origin, next)).status).toBe(404);
      } finally {
        await server.close();
      }
    });

    it('GraphiQL opens on an example made from the data', async () => {
      const [newest] = await app().db.rows<{ packet: number }>(
        "SELECT max(packet) AS packet FROM dumps WHERE status = 'SYNCED' AND change_count > 0",
      );
      const page = await get('/graphql', { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(page.body).toContain(`packet(number: ${newest!.packet})`);
      expect(page.body).toMatch(/entity\(mbid: \\"[0-9a-f-]{36}\\"\)/);
    });

    it('/files/ on a server without the kept archives (another machine): 410 without feed access, fetched from the feed with it', async () => {
      const [file] = await app().db.rows<{ name: string; sha256: string; storedPath: string }>(
        `SELECT name, sha256, stored_path AS "storedPath" FROM feed_files
         WHERE name LIKE 'json-dumps/%' AND stored_path IS NOT NULL ORDER BY name DESC LIMIT 1`,
      );
      const here = await listen(app().app.handle);
      const elsewhere = await tempDir('lf-elsewhere-');
      const client = new FeedClient({ feedRoot: feed.feedRoot, token: SAMPLE_TOKEN, retry: { attempts: 2 } });
      const other = (upstream?: FeedClient) =>
        createApp({
          reads: app().db.reads,
          display: 'the same database',
          service: testService(),
          logger: testLogger(),
          dataDir: elsewhere.dir,
          upstream,
        });
      const bare = await listen(other().handle);
      const proxied = await listen(other(client).handle);
      try {
        const local = await rawRequest(here.origin, `/files/${file!.name}`);
        expect(local.status).toBe(200);
        expect(local.headers.etag).toBe(`"${file!.sha256}"`);
        const gone = await rawRequest(bare.origin, `/files/${file!.name}`);
        expect(gone.status).toBe(410);
        expect(gone.body.toString()).toBe(
          `${file!.name} is not on this server's disk (synced without --keep-files, pruned, or synced on another machine), and this server has no token to fetch it from the feed (LIVEFEED_TOKEN_FILE; README, File links and mirror).\n`,
        );
        const fetched = await rawRequest(proxied.origin, `/files/${file!.name}`);
        expect(fetched.status).toBe(200);
        expect(fetched.body).toEqual(local.body);
        expect((await rawRequest(bare.origin, '/files/json-dumps/nothing.tar.xz')).status).toBe(404);
      } finally {
        await Promise.all([here.close(), bare.close(), proxied.close()]);
        await client.close();
        await elsewhere.cleanup();
      }
    });
  },
);

describeAppStores(
  'HTTP routes over an empty store',
  async () => {},
  (kind, app) => {
    it('/ready: no packet synced yet; then the migration state from the migrator’s own table', async () => {
      const server = await listen(app().app.handle);
      try {
        const ready = await fetch(`${server.origin}/ready`);
        expect(ready.status).toBe(503);
        expect(await ready.text()).toBe('not ready: no packet synced yet\n');
        // drizzle's bookkeeping: `__drizzle_migrations` on SQLite, `drizzle.__drizzle_migrations` on PostgreSQL.
        const table = kind === 'sqlite' ? '__drizzle_migrations' : 'drizzle.__drizzle_migrations';
        await app().db.rows(`DELETE FROM ${table} WHERE created_at = (SELECT max(created_at) FROM ${table})`);
        const behind = await fetch(`${server.origin}/ready`);
        expect(behind.status).toBe(503);
        expect(await behind.text()).toMatch(/^not ready: database .+: 1 of \d+ migrations not applied\n$/);
        const freshness = await fetch(`${server.origin}/freshness`);
        expect(await freshness.text()).toBe('CRITICAL: no packet synced yet\n');
      } finally {
        await server.close();
      }
    });
  },
);

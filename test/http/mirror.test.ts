import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITY_TYPES } from '../../src/feed/entities.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_KEY_FINGERPRINT, TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { type RawResponse, rawRequest } from '../support/rawHttp.js';
import { AppServers } from '../support/serveApp.js';
import { describeStores, SQLITE_STORES, snapshotStore, type TestDatabase } from '../support/stores.js';
import { syncPassOn } from '../support/synced.js';

const manifest = readBundledManifest();
const dumps = manifest.packets.flatMap((p) => Object.values(p.jsonDumps));
/** Mirror tokens have upstream's shape so another livefeed accepts one as its LIVEFEED_TOKEN. */
const MIRROR_TOKEN = 'MirrorTokenForDownstreamLivefeed00000001';
const OTHER_TOKEN = 'MirrorTokenForDownstreamLivefeed00000002';
const withToken = (path: string, token: string) => `${path}${path.includes('?') ? '&' : '?'}token=${token}`;

/**
 * On both stores (issue 17): the served database is a SQLite file or a PostgreSQL database, synced
 * by its own writer with every signature verified; the app reads it through its `Reads`.
 */
describeStores('mirror endpoints /api/<database>/ (issue 4, Mirror endpoints)', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const servers = new AppServers();

  const start = async (mirrorTokens: string[], on = db) =>
    (await servers.startOn(on, { dataDir: data.dir, mirrorTokens })).origin;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    // The bundled feed has replication packets: the mirror serves them like the feed does.
    const logger = testLogger();
    await syncPassOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      logger,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
      replicationPackets: true,
    });
  }, 60_000);
  afterAll(async () => {
    await servers.closeAll();
    await db?.close();
    await feed.close();
    await data.cleanup();
  });

  describe('with mirror tokens', () => {
    let origin: string;
    beforeAll(async () => {
      origin = await start([OTHER_TOKEN, MIRROR_TOKEN]);
    });

    it("checks upstream's way: route, then token present (400), then token valid (403)", async () => {
      const info = '/api/musicbrainz/replication-info';
      const none = await rawRequest(origin, info);
      expect([none.status, none.body.toString()]).toEqual([400, 'You need to provide an access token!\n']);
      const empty = await rawRequest(origin, `${info}?token=`);
      expect(empty.status).toBe(400);
      for (const wrong of [SAMPLE_TOKEN, 'short', `${MIRROR_TOKEN}x`, MIRROR_TOKEN.toLowerCase()]) {
        const res = await rawRequest(origin, withToken(info, wrong));
        expect([res.status, res.body.toString()], wrong).toEqual([
          403,
          'Provided access token is invalid!\n',
        ]);
      }
      for (const token of [MIRROR_TOKEN, OTHER_TOKEN]) {
        const ok = await rawRequest(origin, withToken(info, token));
        expect(ok.status).toBe(200);
        expect(ok.headers['content-type']).toBe('application/json');
        expect(ok.body.toString()).toBe(
          `{"last_packet":"replication-${manifest.lastPacket}.tar.bz2","history_from":${manifest.firstPacket}}\n`,
        );
      }
      const unknown = await rawRequest(origin, '/api/musicbrainz/nothing-here');
      expect(unknown.status).toBe(404);
      expect(unknown.headers['content-type']).toMatch(/^text\/html/);
      const post = await rawRequest(origin, info, { method: 'POST' });
      expect(post.status).toBe(405);
    });

    it("answers every path as the sample feed (upstream's behaviour) does, byte for byte", async () => {
      const last = manifest.packets.at(-1)!;
      const absent = ENTITY_TYPES.find((e) => !last.jsonDumps[e])!;
      // replication-info adds history_from (checked above): every other path as upstream.
      const paths = [
        ...dumps.flatMap((d) => [d.file, d.signature]),
        `json-dumps/json-dump-${last.number}/${absent}.tar.xz`,
        `json-dumps/json-dump-${last.number}/${absent}.tar.xz.asc`,
        `json-dumps/json-dump-${last.number + 1}/area.tar.xz`,
        `replication-${last.number}-v2.tar.bz2`,
        `replication-${last.number}-v2.tar.bz2.asc`,
        `replication-${last.number + 1}-v2.tar.bz2`,
        `json-dumps/json-dump-${last.number}/nonsense.tar.xz`,
        'json-dumps/json-dump-x/area.tar.xz',
        `json-dumps/json-dump-0${last.number}/${dumps.at(-1)!.file.split('/').at(-1)}`,
      ];
      const feedOrigin = new URL(feed.feedRoot).origin;
      const shape = (r: RawResponse) => ({ status: r.status, type: r.headers['content-type'], body: r.body });
      for (const path of paths) {
        const upstream = await rawRequest(feedOrigin, withToken(`/api/musicbrainz/${path}`, SAMPLE_TOKEN));
        const mirror = await rawRequest(origin, withToken(`/api/musicbrainz/${path}`, MIRROR_TOKEN));
        expect(shape(mirror), path).toEqual(shape(upstream));
      }
      // The name this instance did not sync (it fetched `-v2`): not known absent upstream, so no 404.
      const v1 = await rawRequest(
        origin,
        withToken(`/api/musicbrainz/replication-${last.number}.tar.bz2`, MIRROR_TOKEN),
      );
      expect(v1.status).toBe(410);
      const file = dumps[3]!;
      for (const headers of [{ range: 'bytes=3-40' }, { range: 'bytes=100000-' }]) {
        const upstream = await rawRequest(
          feedOrigin,
          withToken(`/api/musicbrainz/${file.file}`, SAMPLE_TOKEN),
          { headers },
        );
        const mirror = await rawRequest(origin, withToken(`/api/musicbrainz/${file.file}`, MIRROR_TOKEN), {
          headers,
        });
        expect(shape(mirror)).toEqual(shape(upstream));
        expect(mirror.headers['content-range']).toBe(upstream.headers['content-range']);
      }
      const head = await rawRequest(origin, withToken(`/api/musicbrainz/${file.file}`, MIRROR_TOKEN), {
        method: 'HEAD',
      });
      expect([head.status, head.headers['content-length'], head.body.length]).toEqual([
        200,
        String(file.bytes),
        0,
      ]);
      expect(readFileSync(join(BUNDLED_FEED_ROOT, file.file)).length).toBe(file.bytes);
    });
  });

  describe('without mirror tokens', () => {
    it('is open', async () => {
      const origin = await start([]);
      const res = await rawRequest(origin, `/api/musicbrainz/${dumps[0]!.file}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(readFileSync(join(BUNDLED_FEED_ROOT, dumps[0]!.file)));
    });

    it('reports no packet when nothing is held', async () => {
      const empty = await tempDir();
      const none = await stores.create(empty.dir);
      try {
        const origin = await start([], none);
        const res = await rawRequest(origin, '/api/musicbrainz/replication-info');
        expect([res.status, res.body.toString()]).toEqual([200, '{"last_packet":null}\n']);
      } finally {
        await none.close();
        await empty.cleanup();
      }
    });
  });

  describe('another livefeed syncs from this one', () => {
    it("stores the same changes, dumps and verified files as this instance (B from A's mirror)", async () => {
      const origin = await start([MIRROR_TOKEN]);
      const dataB = await tempDir();
      const logger = testLogger();
      const b = await SQLITE_STORES.create(dataB.dir);
      const ctx = await syncContextOn(b.store, {
        feedRoot: `${origin}/api/musicbrainz`,
        token: MIRROR_TOKEN,
        dataDir: dataB.dir,
        logger,
        verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
        replicationPackets: true,
      });
      try {
        const report = await syncOnce(ctx);
        expect(report.problems).toEqual([]);
        expect(report.completed).toHaveLength(manifest.packets.length);
        // Every row as A holds it (snapshotStore reads both stores alike), files and signatures too.
        expect(await snapshotStore(b)).toEqual(await snapshotStore(db));
        const signatures = await b.rows('SELECT DISTINCT signature, fingerprint FROM feed_files');
        expect(signatures).toEqual([{ signature: 'VERIFIED', fingerprint: TEST_KEY_FINGERPRINT }]);
        expect(await db.rows('SELECT count(*) AS n FROM changes')).toEqual([
          { n: dumps.reduce((n, d) => n + d.mbids.length, 0) },
        ]);
      } finally {
        await b.close();
        await ctx.feed.client.close();
        await dataB.cleanup();
      }
    });

    it('a new database starts at the first packet this one holds, not before it (history_from)', async () => {
      const held = manifest.packets.at(-4)!.number;
      const dataA = await tempDir();
      const dataB = await tempDir();
      const a = await stores.create(dataA.dir);
      const b = await SQLITE_STORES.create(dataB.dir);
      const logger = testLogger();
      const verifier = await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger);
      const options = { logger, verifier, replicationPackets: true };
      const source = await syncContextOn(a.store, {
        ...options,
        feedRoot: feed.feedRoot,
        dataDir: dataA.dir,
      });
      try {
        expect((await syncOnce(source, { from: held })).problems).toEqual([]);
        const origin = (await servers.startOn(a, { dataDir: dataA.dir })).origin;
        const info = await rawRequest(origin, '/api/musicbrainz/replication-info');
        expect(JSON.parse(info.body.toString())).toEqual({
          last_packet: `replication-${manifest.lastPacket}.tar.bz2`,
          history_from: held,
        });
        const ctx = await syncContextOn(b.store, {
          ...options,
          feedRoot: `${origin}/api/musicbrainz`,
          dataDir: dataB.dir,
        });
        const report = await syncOnce(ctx).finally(() => ctx.feed.client.close());
        // Without history_from it would start at latest − 23 and record 410s for what A never held.
        expect([report.from, report.to, report.problems]).toEqual([held, manifest.lastPacket, []]);
        expect(report.completed).toEqual(
          manifest.packets.filter((p) => p.number >= held).map((p) => p.number),
        );
        expect(await b.rows('SELECT min(number) AS first FROM packets')).toEqual([{ first: held }]);
      } finally {
        await source.feed.client.close();
        await b.close();
        await a.close();
        await dataB.cleanup();
        await dataA.cleanup();
      }
    });
  });
});

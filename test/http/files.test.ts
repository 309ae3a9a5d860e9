import { readFileSync } from 'node:fs';
import { cp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedClient } from '../../src/feed/client.js';
import type { App } from '../../src/http/app.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { gql, tempDir, testLogger } from '../support/harness.js';
import { type ManifestJsonDump, readBundledManifest } from '../support/manifest.js';
import { rawRequest } from '../support/rawHttp.js';
import { AppServers } from '../support/serveApp.js';
import { describeStores, type TestDatabase } from '../support/stores.js';
import { syncPassOn } from '../support/synced.js';

const manifest = readBundledManifest();
const dumps: ManifestJsonDump[] = manifest.packets.flatMap((p) => Object.values(p.jsonDumps));
const newest = dumps.at(-1)!;
const oldest = dumps[0]!;
const fixture = (name: string) => readFileSync(join(BUNDLED_FEED_ROOT, name));

/**
 * On both stores (issue 17): the database is a SQLite file or a PostgreSQL database synced by its
 * own writer with every signature verified; the app reads `feed_files` through its `Reads`.
 */
describeStores('file links /files/<feed path> (issue 4, Files and links)', (stores) => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let db: TestDatabase;
  const servers = new AppServers();
  const logLines: string[] = [];

  /** An app on the synced store, optionally with upstream access, served on port 0. */
  const start = (upstream?: FeedClient) =>
    servers.startOn(db, { logger: testLogger(logLines), dataDir: data.dir, upstream });

  beforeAll(async () => {
    root = await tempDir('feed-');
    await cp(BUNDLED_FEED_ROOT, root.dir, { recursive: true });
    feed = await startSampleFeed({ root: root.dir });
    data = await tempDir();
    db = await stores.create(data.dir);
    const logger = testLogger();
    await syncPassOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      logger,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    });
  }, 60_000);
  afterAll(async () => {
    await servers.closeAll();
    await db?.close();
    await feed.close();
    await root.cleanup();
    await data.cleanup();
  });

  describe('kept files', () => {
    let app: App;
    let origin: string;
    beforeAll(async () => {
      ({ app, origin } = await start());
    });

    it('FeedFile.url and signatureUrl return the exact upstream bytes with the right types and ETag', async () => {
      for (const packet of manifest.packets) {
        const { data: d, errors } = await gql(
          app,
          'query($n: Int!) { packet(number: $n) { dumps { file { name url signatureUrl sha256 size signature } } } }',
          { n: packet.number },
        );
        expect(errors).toBeUndefined();
        const files = (d!.packet.dumps as { file: Record<string, string> | null }[]).flatMap((x) =>
          x.file ? [x.file] : [],
        );
        expect(files).toHaveLength(Object.keys(packet.jsonDumps).length);
        for (const file of files) {
          expect(file.url).toBe(`http://livefeed.test/files/${file.name}`);
          expect(file.signatureUrl).toBe(`http://livefeed.test/files/${file.name}.asc`);
          expect(file.signature).toBe('VERIFIED');
          const archive = await fetch(`${origin}${new URL(file.url!).pathname}`);
          expect(archive.status).toBe(200);
          expect(archive.headers.get('content-type')).toBe('application/x-xz');
          expect(archive.headers.get('etag')).toBe(`"${file.sha256}"`);
          expect(archive.headers.get('accept-ranges')).toBe('bytes');
          expect(Buffer.from(await archive.arrayBuffer())).toEqual(fixture(file.name!));
          const signature = await fetch(`${origin}${new URL(file.signatureUrl!).pathname}`);
          expect(signature.status).toBe(200);
          expect(signature.headers.get('content-type')).toBe('application/pgp-signature');
          expect(signature.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
          expect(Buffer.from(await signature.arrayBuffer())).toEqual(fixture(`${file.name}.asc`));
        }
      }
    });

    it('answers Range with 206 and 416, HEAD without a body, If-None-Match with 304', async () => {
      const url = `${origin}/files/${newest.file}`;
      const bytes = fixture(newest.file);
      const first = await rawRequest(origin, `/files/${newest.file}`, { headers: { range: 'bytes=0-9' } });
      expect(first.status).toBe(206);
      expect(first.headers['content-range']).toBe(`bytes 0-9/${bytes.length}`);
      expect(first.body).toEqual(bytes.subarray(0, 10));
      const tail = await rawRequest(origin, `/files/${newest.file}`, { headers: { range: 'bytes=-7' } });
      expect(tail.status).toBe(206);
      expect(tail.body).toEqual(bytes.subarray(bytes.length - 7));
      const past = await rawRequest(origin, `/files/${newest.file}`, {
        headers: { range: `bytes=${bytes.length}-` },
      });
      expect(past.status).toBe(416);
      expect(past.headers['content-range']).toBe(`bytes */${bytes.length}`);
      const head = await rawRequest(origin, `/files/${newest.file}`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(bytes.length));
      expect(head.body.length).toBe(0);
      const cached = await fetch(url, { headers: { 'if-none-match': `"${newest.sha256}"` } });
      expect(cached.status).toBe(304);
      // If-Range with a stale validator: the whole file, not a piece of a different one.
      const stale = await rawRequest(origin, `/files/${newest.file}`, {
        headers: { range: 'bytes=0-9', 'if-range': '"old"' },
      });
      expect(stale.status).toBe(200);
      expect(stale.body).toEqual(bytes);
    });

    it('serves only names recorded in feed_files, never another path (404, no body of any file)', async () => {
      const attempts = [
        '/files/livefeed.db',
        '/files/../livefeed.db',
        '/files/..%2flivefeed.db',
        '/files/%2e%2e/livefeed.db',
        `/files/${newest.file.replace('json-dumps/', 'json-dumps/../json-dumps/')}`,
        `/files/./${newest.file}`,
        `/files/files/${newest.file}`,
        '/files/json-dumps/json-dump-1/area.tar.xz',
        `/files/${manifest.packets[0]!.number}`,
        '/files/%ZZ',
        `/api/../files/${newest.file}`,
        '/files/',
        `/files/${newest.file}.asc.asc`,
      ];
      for (const path of attempts) {
        const res = await rawRequest(origin, path);
        expect(res.status, path).toBe(404);
        expect(res.body.toString('utf8'), path).toBe('No such feed file on this server.\n');
      }
    });

    it('answers other methods with 405', async () => {
      const res = await rawRequest(origin, `/files/${newest.file}`, { method: 'POST' });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    });
  });

  describe('files no longer kept (retention)', () => {
    let local: { origin: string };
    let proxied: { origin: string };
    let client: FeedClient;

    beforeAll(async () => {
      const removed = await db.store.applyRetention(data.dir, { kind: 'packets', count: 0 }, new Date());
      expect(removed.files).toBe(dumps.length);
      local = await start();
      client = new FeedClient({
        feedRoot: feed.feedRoot,
        token: SAMPLE_TOKEN,
        retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
      });
      proxied = await start(client);
    });
    afterAll(async () => {
      await client.close();
    });

    it('without upstream access: 410 Gone, while the signature is still served', async () => {
      const res = await rawRequest(local.origin, `/files/${oldest.file}`);
      expect(res.status).toBe(410);
      expect(res.body.toString()).toBe(
        `${oldest.file} is not on this server's disk (synced without --keep-files, pruned, or synced on another machine), and this server has no token to fetch it from the feed (LIVEFEED_TOKEN_FILE; README, File links and mirror).\n`,
      );
      const signature = await rawRequest(local.origin, `/files/${oldest.signature}`);
      expect(signature.status).toBe(200);
      expect(signature.body).toEqual(fixture(oldest.signature));
    });

    it('with upstream access: fetched on demand, exact bytes, Range works, nothing left on disk', async () => {
      const before = feed.requests.length;
      const res = await rawRequest(proxied.origin, `/files/${oldest.file}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(fixture(oldest.file));
      expect(res.headers.etag).toBe(`"${oldest.sha256}"`);
      expect(feed.requests.slice(before)).toEqual([
        { method: 'GET', path: `/api/musicbrainz/${oldest.file}`, status: 200 },
      ]);
      const part = await rawRequest(proxied.origin, `/files/${oldest.file}`, {
        headers: { range: 'bytes=5-' },
      });
      expect(part.status).toBe(206);
      expect(part.body).toEqual(fixture(oldest.file).subarray(5));
      const leftovers = await readdir(join(data.dir, 'tmp'), { recursive: true, withFileTypes: true });
      expect(leftovers.filter((e) => e.isFile())).toEqual([]);
    });

    it('refuses bytes that differ from those verified at sync time (502), and 410 when the feed lost the file', async () => {
      const victim = dumps[1]!;
      await cp(join(root.dir, dumps[2]!.file), join(root.dir, victim.file));
      const changed = await rawRequest(proxied.origin, `/files/${victim.file}`);
      expect(changed.status).toBe(502);
      expect(changed.body.toString()).not.toContain('token');
      expect(logLines.some((l) => l.includes('"event":"upstream-file-changed"'))).toBe(true);
      await rm(join(root.dir, victim.file));
      const lost = await rawRequest(proxied.origin, `/files/${victim.file}`);
      expect(lost.status).toBe(410);
      expect(lost.body.toString()).toBe(
        `${victim.file} is not on this server's disk, and the feed no longer has it.\n`,
      );
    });
  });
});

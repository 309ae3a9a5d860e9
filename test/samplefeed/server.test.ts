import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SAMPLE_TOKEN, startSampleFeed } from '../../src/samplefeed/server.js';
import { writeJsonDump } from '../support/archives.js';
import { rawRequest } from '../support/rawHttp.js';
import { OTHER_TOKEN, PACKET_BYTES, useSampleFeedFixture } from '../support/sampleFeedFixture.js';

// The routes, errors and files of the sample feed server; path traversal, its request log and
// options: serverAccess.test.ts.
const f = useSampleFeedFixture();

const ENDPOINTS = [
  'replication-info',
  'replication-7-v2.tar.bz2',
  'replication-7-v2.tar.bz2.asc',
  'json-dumps/json-dump-5/artist.tar.xz',
  'json-dumps/json-dump-5/artist.tar.xz.asc',
];

describe('feed root and replication-info', () => {
  it('reports its feed root on loopback', () => {
    expect(f.feed.feedRoot).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/musicbrainz$/);
  });

  it('names the highest packet with a packet file or a json-dump folder, plain name', async () => {
    const res = await f.get('replication-info');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body.toString())).toEqual({ last_packet: 'replication-8.tar.bz2' });
  });

  it('answers null on an empty feed and sees files added later', async () => {
    const emptyRoot = join(f.tmp, 'empty');
    const empty = await startSampleFeed({ root: emptyRoot });
    try {
      const info = async () =>
        JSON.parse(
          (
            await rawRequest(empty.feedRoot, `/api/musicbrainz/replication-info?token=${SAMPLE_TOKEN}`)
          ).body.toString(),
        );
      expect(await info()).toEqual({ last_packet: null });
      await writeJsonDump(emptyRoot, { packet: 3, entity: 'work', lines: ['{"id":"w"}'] });
      expect(await info()).toEqual({ last_packet: 'replication-3.tar.bz2' });
      await writeFile(join(emptyRoot, 'replication-4-v2.tar.bz2'), 'x');
      expect(await info()).toEqual({ last_packet: 'replication-4.tar.bz2' });
    } finally {
      await empty.close();
    }
  });
});

describe('errors (FEED.md, Errors)', () => {
  it.each(ENDPOINTS)('%s without a token: 400', async (path) => {
    for (const token of [null, '']) {
      const res = await f.get(path, { token });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.body.toString()).toBe('You need to provide an access token!\n');
    }
  });

  it.each(ENDPOINTS)('%s with an unknown token: 403', async (path) => {
    const res = await f.get(path, { token: OTHER_TOKEN });
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body.toString()).toBe('Provided access token is invalid!\n');
  });

  it('checks the token before the file: unknown token on a missing file is 403', async () => {
    expect((await f.get('replication-99-v2.tar.bz2', { token: OTHER_TOKEN })).status).toBe(403);
    expect((await f.get('json-dumps/json-dump-99/area.tar.xz', { token: null })).status).toBe(400);
  });

  it.each([
    ['replication-99-v2.tar.bz2', "Can't find specified replication packet!\n"],
    ['replication-99.tar.bz2', "Can't find specified replication packet!\n"],
    ['replication-7.tar.bz2', "Can't find specified replication packet!\n"],
    ['json-dumps/json-dump-5/work.tar.xz', "Can't find specified JSON dump!"],
    ['json-dumps/json-dump-99/artist.tar.xz', "Can't find specified JSON dump!"],
    ['replication-8.tar.bz2.asc', "Can't find signature for replication-8.tar.bz2"],
    ['replication-99-v2.tar.bz2.asc', "Can't find signature for replication-99-v2.tar.bz2"],
    ['json-dumps/json-dump-5/area.tar.xz.asc', "Can't find signature for json-dumps/json-dump-5/area.tar.xz"],
  ])('%s missing: 404 %j', async (path, body) => {
    const res = await f.get(path);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body.toString()).toBe(body);
  });

  it.each([
    '/',
    '/api/musicbrainz',
    '/api/musicbrainz/',
    '/api/other/replication-info',
    '/api/musicbrainz/replication-info/',
    '/api/musicbrainz//replication-info',
    '/api/musicbrainz/replication-x.tar.bz2',
    '/api/musicbrainz/replication-7-v3.tar.bz2',
    '/api/musicbrainz/replication-7-v2.tar.gz',
    '/api/musicbrainz/json-dumps/json-dump-5/',
    '/api/musicbrainz/json-dumps/json-dump-5/unknown.tar.xz',
    '/api/musicbrainz/json-dumps/json-dump-5/artist.tar.bz2',
    '/api/musicbrainz/json-dumps/json-dump-5/artist',
    '/api/musicbrainz/json-dumps/json-dump-x/artist.tar.xz',
    '/api/musicbrainz/replication-check',
    '/api/musicbrainz/%zz',
  ])('%s matches no route: 404 HTML, before any token check', async (path) => {
    for (const query of ['', `?token=${SAMPLE_TOKEN}`]) {
      const res = await rawRequest(f.origin, `${path}${query}`);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body.toString()).toMatch(/^<!doctype html>/);
    }
  });

  it('answers other methods on a route with 405', async () => {
    const res = await f.get('replication-info', { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});

describe('files', () => {
  it('serves a replication packet whole with its headers', async () => {
    const res = await f.get('replication-7-v2.tar.bz2');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-bzip2');
    expect(res.headers['content-length']).toBe(String(PACKET_BYTES.length));
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.body.equals(PACKET_BYTES)).toBe(true);
  });

  it('serves test-deployment names, JSON dumps and signatures with their types', async () => {
    const plain = await f.get('replication-8.tar.bz2');
    expect([plain.status, plain.headers['content-type'], plain.body.toString()]).toEqual([
      200,
      'application/x-bzip2',
      'test deployment naming',
    ]);
    const dump = await f.get('json-dumps/json-dump-5/artist.tar.xz');
    expect(dump.status).toBe(200);
    expect(dump.headers['content-type']).toBe('application/x-xz');
    expect(dump.body.equals(await readFile(join(f.root, 'json-dumps/json-dump-5/artist.tar.xz')))).toBe(true);
    for (const path of ['json-dumps/json-dump-5/artist.tar.xz.asc', 'replication-7-v2.tar.bz2.asc']) {
      const signature = await f.get(path);
      expect(signature.status).toBe(200);
      expect(signature.headers['content-type']).toBe('application/pgp-signature');
      expect(signature.body.toString()).toMatch(/^-----BEGIN PGP SIGNATURE-----/);
    }
  });

  it('normalizes packet numbers and decodes escapes like upstream', async () => {
    expect((await f.get('replication-007-v2.tar.bz2')).body.equals(PACKET_BYTES)).toBe(true);
    expect((await f.get('replication%2D7-v2.tar.bz2')).status).toBe(200);
  });

  it('serves files published after start (read on every request)', async () => {
    expect((await f.get('json-dumps/json-dump-6/work.tar.xz')).status).toBe(404);
    await writeJsonDump(f.root, { packet: 6, entity: 'work', lines: ['{"id":"w"}'] });
    expect((await f.get('json-dumps/json-dump-6/work.tar.xz')).status).toBe(200);
  });

  const size = PACKET_BYTES.length;
  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=99990-', 99_990, size - 1],
    ['bytes=-10', size - 10, size - 1],
    ['bytes=-200000', 0, size - 1],
    ['bytes=99990-200000', 99_990, size - 1],
    ['bytes=5-5', 5, 5],
  ])('Range %s: 206 with that slice', async (range, start, end) => {
    const res = await f.get('replication-7-v2.tar.bz2', { headers: { range } });
    expect(res.status).toBe(206);
    expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${size}`);
    expect(res.headers['content-length']).toBe(String(end - start + 1));
    expect(res.body.equals(PACKET_BYTES.subarray(start, end + 1))).toBe(true);
  });

  it.each(['bytes=100000-', 'bytes=100000-100001', 'bytes=5-2', 'bytes=abc', 'bytes=-0', 'bytes=-'])(
    'Range %s: 416 with the size',
    async (range) => {
      const res = await f.get('replication-7-v2.tar.bz2', { headers: { range } });
      expect(res.status).toBe(416);
      expect(res.headers['content-range']).toBe(`bytes */${size}`);
    },
  );

  it.each(['bytes=0-1,5-6', 'items=0-1'])(
    'Range %s (several ranges, other unit): ignored, 200',
    async (range) => {
      const res = await f.get('replication-7-v2.tar.bz2', { headers: { range } });
      expect(res.status).toBe(200);
      expect(res.body.equals(PACKET_BYTES)).toBe(true);
    },
  );

  it('answers HEAD with the GET headers and no body', async () => {
    const head = await f.get('replication-7-v2.tar.bz2', { method: 'HEAD' });
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([200, String(size), 0]);
    expect(head.headers['content-type']).toBe('application/x-bzip2');
    const ranged = await f.get('replication-7-v2.tar.bz2', {
      method: 'HEAD',
      headers: { range: 'bytes=10-19' },
    });
    expect([ranged.status, ranged.headers['content-range'], ranged.body.length]).toEqual([
      206,
      `bytes 10-19/${size}`,
      0,
    ]);
    const missing = await f.get('replication-99-v2.tar.bz2', { method: 'HEAD' });
    expect([missing.status, missing.body.length]).toEqual([404, 0]);
    expect((await f.get('replication-info', { method: 'HEAD' })).status).toBe(200);
  });
});

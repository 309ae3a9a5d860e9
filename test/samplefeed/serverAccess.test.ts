import { describe, expect, it } from 'vitest';
import { SAMPLE_TOKEN, startSampleFeed } from '../../src/samplefeed/server.js';
import { rawRequest } from '../support/rawHttp.js';
import { OTHER_TOKEN, useSampleFeedFixture } from '../support/sampleFeedFixture.js';

// What the sample feed server never serves (paths outside its feed root), what its request log
// holds, and the options it refuses.
const f = useSampleFeedFixture();

describe('path traversal', () => {
  it.each([
    '/api/musicbrainz/../../secret.txt',
    '/api/musicbrainz/../secret.txt',
    '/api/musicbrainz/%2e%2e/secret.txt',
    '/api/musicbrainz/..%2F..%2Fsecret.txt',
    '/api/musicbrainz/json-dumps/json-dump-5/..%2F..%2F..%2F..%2Fsecret.txt',
    '/api/musicbrainz/json-dumps/json-dump-5/../../replication-7-v2.tar.bz2',
    '/api/musicbrainz/json-dumps/json-dump-5/%2e%2e/%2e%2e/replication-7-v2.tar.bz2',
    '/api/musicbrainz/json-dumps/../replication-7-v2.tar.bz2',
    '/api/musicbrainz/./replication-7-v2.tar.bz2',
    '/api/musicbrainz/json-dumps/json-dump-5%2F..%2F..%2Freplication-7-v2.tar.bz2',
    '/api/musicbrainz/..%5C..%5Csecret.txt',
    '/api/musicbrainz/replication-7-v2.tar.bz2%00',
  ])('%s is no route: 404 HTML', async (path) => {
    const res = await rawRequest(f.origin, `${path}?token=${SAMPLE_TOKEN}`);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body.toString()).not.toContain('outside the feed root');
  });
});

describe('request log and options', () => {
  it('logs method, path and status, never the query string or the token', async () => {
    const before = f.feed.requests.length;
    await f.get('replication-info');
    await f.get('replication-99-v2.tar.bz2', { method: 'HEAD' });
    await f.get('replication-info', { token: OTHER_TOKEN });
    expect(f.feed.requests.slice(before)).toEqual([
      { method: 'GET', path: '/api/musicbrainz/replication-info', status: 200 },
      { method: 'HEAD', path: '/api/musicbrainz/replication-99-v2.tar.bz2', status: 404 },
      { method: 'GET', path: '/api/musicbrainz/replication-info', status: 403 },
    ]);
    const log = JSON.stringify(f.feed.requests);
    expect(log).not.toContain(SAMPLE_TOKEN);
    expect(log).not.toContain(OTHER_TOKEN);
    expect(log).not.toContain('?');
  });

  it('serves another database segment and accepts only the tokens given', async () => {
    const other = await startSampleFeed({ root: f.root, database: 'testdb', tokens: [OTHER_TOKEN] });
    try {
      expect(other.feedRoot).toMatch(/\/api\/testdb$/);
      const at = (token: string) =>
        rawRequest(other.feedRoot, `/api/testdb/replication-7-v2.tar.bz2?token=${token}`);
      expect((await at(OTHER_TOKEN)).status).toBe(200);
      expect((await at(SAMPLE_TOKEN)).status).toBe(403);
      expect(
        (await rawRequest(other.feedRoot, `/api/musicbrainz/replication-info?token=${OTHER_TOKEN}`)).status,
      ).toBe(404);
    } finally {
      await other.close();
    }
  });

  it('refuses malformed options without echoing a token', async () => {
    await expect(startSampleFeed({ root: f.root, tokens: ['short-secret'] })).rejects.toThrow(
      /token #1 is not 40/,
    );
    await expect(startSampleFeed({ root: f.root, tokens: ['short-secret'] })).rejects.not.toThrow(
      /short-secret/,
    );
    await expect(startSampleFeed({ root: f.root, database: 'a/b' })).rejects.toThrow(/one path segment/);
  });
});

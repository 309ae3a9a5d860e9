import { describe, expect, it } from 'vitest';
import {
  databaseName,
  feedUrl,
  jsonDumpPath,
  parseFeedInfo,
  parseReplicationInfo,
  redactUrl,
  replicationPacketName,
  signaturePath,
} from '../../../src/feed/protocol/urls.js';

describe('feed URLs (FEED.md, Deployments and URLs)', () => {
  it('names replication packets per deployment', () => {
    expect(replicationPacketName(186123, 'production')).toBe('replication-186123-v2.tar.bz2');
    expect(replicationPacketName(186123, 'test')).toBe('replication-186123.tar.bz2');
  });

  it('builds JSON dump and signature paths', () => {
    expect(jsonDumpPath(186123, 'release-group')).toBe('json-dumps/json-dump-186123/release-group.tar.xz');
    expect(signaturePath(jsonDumpPath(7, 'area'))).toBe('json-dumps/json-dump-7/area.tar.xz.asc');
  });

  it('joins paths under the feed root, adding the token only as a query parameter', () => {
    const url = feedUrl('https://metabrainz.org/api/musicbrainz', 'replication-info', 'TOKEN123');
    expect(url.toString()).toBe('https://metabrainz.org/api/musicbrainz/replication-info?token=TOKEN123');
    expect(feedUrl('https://test.metabrainz.org/api/musicbrainz/', '/replication-1.tar.bz2').toString()).toBe(
      'https://test.metabrainz.org/api/musicbrainz/replication-1.tar.bz2',
    );
    expect(redactUrl(url)).toBe('https://metabrainz.org/api/musicbrainz/replication-info?token=***');
  });

  it('takes the database name from the feed root', () => {
    expect(databaseName('https://metabrainz.org/api/musicbrainz')).toBe('musicbrainz');
    expect(databaseName('http://127.0.0.1:4000/api/musicbrainz-test/')).toBe('musicbrainz-test');
  });
});

describe('parseReplicationInfo (FEED.md, replication-info)', () => {
  it.each([
    [{ last_packet: 'replication-186123.tar.bz2' }, 186123],
    [{ last_packet: 'replication-7-v2.tar.bz2' }, 7],
    [{ last_packet: null }, null],
  ])('%j → %j', (body, expected) => {
    expect(parseReplicationInfo(body)).toBe(expected);
  });

  it.each([[{}], [{ last_packet: 186123 }], [{ last_packet: 'replication-x.tar.bz2' }], [null], ['text']])(
    'rejects %j with the body quoted',
    (body) => {
      expect(() => parseReplicationInfo(body)).toThrow(/replication-info: unexpected body/);
    },
  );
});

describe("parseFeedInfo: a livefeed mirror's history_from (README, File links and mirror)", () => {
  it.each([
    [{ last_packet: 'replication-186123.tar.bz2' }, { latest: 186123, historyFrom: undefined }],
    [
      { last_packet: 'replication-186123.tar.bz2', history_from: 186120 },
      { latest: 186123, historyFrom: 186120 },
    ],
  ])('%j → %j', (body, expected) => {
    expect(parseFeedInfo(body)).toEqual(expected);
  });

  it.each([[0], [-3], [1.5], ['186120'], [null]])('rejects history_from %j with the body quoted', (from) => {
    expect(() => parseFeedInfo({ last_packet: 'replication-9.tar.bz2', history_from: from })).toThrow(
      /replication-info: unexpected history_from in \{"last_packet"/,
    );
  });
});

import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  envOnlyOf,
  flagsOf,
  loadConfig,
  loadSampleFeedConfig,
  REPUBLISHED_PACKETS,
} from '../src/config.js';
import { ENTITY_TYPES } from '../src/feed/entities.js';
import { TEST_PUBLIC_KEY_FILE } from './support/archives.js';
import { tempDir } from './support/harness.js';

const TOKEN = 'abcdefghijABCDEFGHIJ0123456789abcdefghij';

describe('loadConfig', () => {
  it('uses the defaults of the issue', () => {
    const config = loadConfig({}, {});
    expect(config).toMatchObject({
      feedUrl: 'https://metabrainz.org/api/musicbrainz',
      deployment: 'production',
      db: join('data', 'livefeed.db'),
      host: '127.0.0.1',
      port: 4000,
      entities: [...ENTITY_TYPES],
      pollIntervalMs: 300_000,
      settleAfterMs: null,
      replicationPackets: true,
      skipPackets: [],
      acceptUnsigned: [],
      allowWeakSigningKey: false,
      allowSha1Signatures: false,
      verify: 'off',
      once: false,
    });
    expect(config.token).toBeUndefined();
  });

  it('--keep-history / LIVEFEED_KEEP_HISTORY: all by default, a packet count or an age, else a clear error', () => {
    expect(loadConfig({}, {}).keepHistory).toEqual({ kind: 'all' });
    expect(loadConfig({}, { LIVEFEED_KEEP_HISTORY: '720' }).keepHistory).toEqual({
      kind: 'packets',
      count: 720,
    });
    expect(loadConfig({ keepHistory: '30d' }, { LIVEFEED_KEEP_HISTORY: '720' }).keepHistory).toEqual({
      kind: 'age',
      maxAgeMs: 30 * 86_400_000,
    });
    expect(() => loadConfig({ keepHistory: 'forever' }, {})).toThrow(
      /--keep-history.*must be all, a number of packets/,
    );
  });

  it('takes flags over env over defaults', () => {
    const env = {
      LIVEFEED_PORT: '5000',
      LIVEFEED_HOST: '0.0.0.0',
      LIVEFEED_ENTITIES: 'area,artist',
      LIVEFEED_TOKEN: TOKEN,
    };
    const config = loadConfig({ port: '6000', entities: 'work' }, env);
    expect(config.port).toBe(6000);
    expect(config.host).toBe('0.0.0.0');
    expect(config.entities).toEqual(['work']);
    expect(config.token).toBe(TOKEN);
  });

  it('switches the default feed root with the test deployment', () => {
    expect(loadConfig({ deployment: 'test' }, {}).feedUrl).toBe(
      'https://test.metabrainz.org/api/musicbrainz',
    );
    expect(
      loadConfig({ deployment: 'test', feedUrl: 'http://127.0.0.1:1/api/musicbrainz' }, {}).feedUrl,
    ).toBe('http://127.0.0.1:1/api/musicbrainz');
  });

  it('takes the test deployment from its feed root, and refuses a deployment that contradicts upstream’s host', () => {
    const TEST_ROOT = 'https://test.metabrainz.org/api/musicbrainz';
    expect(loadConfig({ feedUrl: TEST_ROOT }, {}).deployment).toBe('test');
    expect(loadConfig({}, { LIVEFEED_FEED_URL: TEST_ROOT }).deployment).toBe('test');
    expect(loadConfig({ feedUrl: 'http://127.0.0.1:1/api/musicbrainz' }, {}).deployment).toBe('production');
    expect(loadConfig({}, {}).deployment).toBe('production');
    expect(() => loadConfig({ feedUrl: TEST_ROOT, deployment: 'production' }, {})).toThrow(
      /--deployment production does not match --feed-url https:\/\/test\.metabrainz\.org\/api\/musicbrainz, the test deployment's feed root \(its replication packets are named replication-N\.tar\.bz2\); set --deployment test/,
    );
    expect(() =>
      loadConfig(
        {},
        { LIVEFEED_FEED_URL: 'https://metabrainz.org/api/musicbrainz', LIVEFEED_DEPLOYMENT: 'test' },
      ),
    ).toThrow(/LIVEFEED_DEPLOYMENT test does not match LIVEFEED_FEED_URL .*replication-N-v2\.tar\.bz2/);
  });

  it('reads the token from LIVEFEED_TOKEN_FILE', async () => {
    const dir = await tempDir();
    const file = join(dir.dir, 'token');
    writeFileSync(file, `${TOKEN}\n`);
    expect(loadConfig({}, { LIVEFEED_TOKEN_FILE: file }).token).toBe(TOKEN);
    await dir.cleanup();
  });

  it('names every bad value at once, never the token', () => {
    const badToken = 'short-secret-value';
    let error: unknown;
    try {
      loadConfig(
        { port: '99999', entities: 'artist,song', deployment: 'staging' },
        { LIVEFEED_TOKEN: badToken, LIVEFEED_VERIFY: 'maybe' },
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('--port');
    expect(message).toContain('song');
    expect(message).toContain('--deployment');
    expect(message).toContain('LIVEFEED_VERIFY');
    expect(message).toContain('LIVEFEED_TOKEN');
    expect(message).not.toContain(badToken);
  });

  it('says what a number flag expects in plain words, not zod’s', () => {
    const message = (flags: Record<string, string>, env: Record<string, string> = {}) => {
      try {
        loadConfig(flags, env);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message({ pollInterval: 'x' })).toContain('--poll-interval x: expected a number');
    expect(message({ from: '-5' })).toContain('--from -5: expected a number ≥ 1');
    expect(message({ from: '1.5' })).toContain('--from 1.5: expected a whole number');
    expect(message({ port: '99999' })).toContain('--port 99999: expected a number ≤ 65535');
    expect(message({}, { LIVEFEED_VERIFY: 'maybe' })).toContain(
      'LIVEFEED_VERIFY=maybe: expected one of fail, warn, off',
    );
    expect(message({ pollInterval: 'x' })).not.toMatch(/Invalid input|received NaN/);
  });

  it('rejects --from after --to', () => {
    expect(() => loadConfig({ from: '10', to: '5' }, {})).toThrow(/--from 10 is after --to 5/);
  });

  it('expands packet ranges in --skip-packets and defaults --verify to fail with a key', () => {
    const config = loadConfig({ skipPackets: '5,7-9', signingKey: TEST_PUBLIC_KEY_FILE }, {});
    expect(config.skipPackets).toEqual([5, 7, 8, 9]);
    expect(config.verify).toBe('fail');
  });

  it('fetches the packets once broken upstream by default: they were republished fixed', () => {
    const config = loadConfig({}, {});
    for (const packet of [104949, 162718, 162719, 162720, 162721, 162722, 162723, 162724]) {
      expect(config.skipPackets).not.toContain(packet);
    }
    expect(REPUBLISHED_PACKETS).toContain(104949);
    expect(loadConfig({}, { LIVEFEED_SKIP_PACKETS: '104949,162718-162724' }).skipPackets).toEqual([
      104949, 162718, 162719, 162720, 162721, 162722, 162723, 162724,
    ]);
  });

  it('settles by time only when the operator sets hours (none and off mean no time-based settling)', () => {
    expect(loadConfig({ settleAfter: '3' }, {}).settleAfterMs).toBe(3 * 3_600_000);
    expect(loadConfig({}, { LIVEFEED_SETTLE_AFTER: 'none' }).settleAfterMs).toBeNull();
    expect(loadConfig({ settleAfter: 'off' }, {}).settleAfterMs).toBeNull();
    expect(() => loadConfig({ settleAfter: 'soon' }, {})).toThrow(/--settle-after/);
  });

  it('refuses --verify fail without a signing key instead of running UNVERIFIED', () => {
    expect(() => loadConfig({ verify: 'fail' }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ verify: 'fail' }, {})).toThrow(/--verify fail needs a signing key.*README/);
    expect(() => loadConfig({}, { LIVEFEED_VERIFY: 'fail' })).toThrow(
      /LIVEFEED_VERIFY fail needs a signing key/,
    );
    expect(loadConfig({ verify: 'warn' }, {}).verify).toBe('warn');
  });

  it('reads --accept-unsigned paths and --allow-weak-signing-key', () => {
    const config = loadConfig(
      {
        acceptUnsigned: 'json-dumps/json-dump-7/area.tar.xz, replication-7-v2.tar.bz2',
        allowWeakSigningKey: true,
      },
      {},
    );
    expect(config.acceptUnsigned).toEqual(['json-dumps/json-dump-7/area.tar.xz', 'replication-7-v2.tar.bz2']);
    expect(config.allowWeakSigningKey).toBe(true);
    expect(loadConfig({}, { LIVEFEED_ALLOW_WEAK_SIGNING_KEY: 'true' }).allowWeakSigningKey).toBe(true);
    expect(loadConfig({ allowSha1Signatures: true }, {}).allowSha1Signatures).toBe(true);
    expect(loadConfig({}, { LIVEFEED_ALLOW_SHA1_SIGNATURES: 'true' }).allowSha1Signatures).toBe(true);
  });

  it('names the variable and its value: LIVEFEED_REPLICATION_PACKETS=no: expected true or false', () => {
    expect(() => loadConfig({}, { LIVEFEED_REPLICATION_PACKETS: 'no' })).toThrow(
      'LIVEFEED_REPLICATION_PACKETS=no: expected true or false',
    );
    expect(() => loadConfig({}, { LIVEFEED_PORT: 'abc' })).toThrow(/LIVEFEED_PORT=abc: /);
    expect(() => loadConfig({ port: 'abc' }, {})).toThrow(/--port abc: /);
  });

  it('a --signing-key file that does not exist is a configuration error naming it', () => {
    expect(() => loadConfig({ signingKey: '/nonexistent/key.asc' }, {})).toThrow(
      /--signing-key \/nonexistent\/key.asc: no such file/,
    );
    expect(() => loadConfig({}, { LIVEFEED_SIGNING_KEY: '/nonexistent/key.asc' })).toThrow(
      /LIVEFEED_SIGNING_KEY \/nonexistent\/key.asc: no such file/,
    );
  });

  it('reads NO_COLOR, the OS user and the sample feed port only here, from the env it is given', () => {
    expect(loadConfig({}, {}).noColor).toBe(false);
    expect(loadConfig({}, { NO_COLOR: '1' }).noColor).toBe(true);
    expect(loadConfig({}, {}).operator).toBe(userInfo().username);
    expect(loadSampleFeedConfig({}, {})).toEqual({ sampleFeedPort: 8080, sampleFeedHost: '127.0.0.1' });
    expect(loadSampleFeedConfig({}, { LIVEFEED_SAMPLE_FEED_PORT: '9090' }).sampleFeedPort).toBe(9090);
    expect(loadSampleFeedConfig({ port: '7070' }, { LIVEFEED_SAMPLE_FEED_PORT: '9090' }).sampleFeedPort).toBe(
      7070,
    );
    expect(() => loadSampleFeedConfig({}, { LIVEFEED_SAMPLE_FEED_PORT: 'x' })).toThrow(
      /LIVEFEED_SAMPLE_FEED_PORT=x: /,
    );
  });

  it('records which options were given (flag or env), not defaulted', () => {
    expect(loadConfig({}, {}).given.has('db')).toBe(false);
    expect(loadConfig({}, { LIVEFEED_DB: '/tmp/x.db' }).given.has('db')).toBe(true);
    expect(loadConfig({ db: '/tmp/x.db' }, {}).given.has('db')).toBe(true);
  });

  it('lists each command its flags with env name and default, from the one table', () => {
    const sync = flagsOf('sync').map((f) => f.flag);
    expect(sync).toContain('--keep-files <count|age>');
    expect(sync).not.toContain('--port <port>');
    expect(flagsOf('serve').find((f) => f.flag === '--port <port>')?.help).toBe(
      'port of the GraphQL server (env LIVEFEED_PORT; default 4000)',
    );
    expect(flagsOf('sample-feed').map((f) => f.flag)).toEqual([
      '--port <port>',
      '--host <host>',
      '--root <dir>',
    ]);
  });

  it('lists each command the options it reads from the environment only (no flag), hidden ones left out', () => {
    const envOnly = ['LIVEFEED_DB_PASSWORD_FILE', 'LIVEFEED_TOKEN / LIVEFEED_TOKEN_FILE'];
    const serving = [
      ...envOnly,
      'LIVEFEED_MIRROR_TOKENS / LIVEFEED_MIRROR_TOKENS_FILE',
      'LIVEFEED_CORS_ORIGINS',
    ];
    expect(envOnlyOf('serve').map((e) => e.env)).toEqual(serving);
    expect(envOnlyOf('start').map((e) => e.env)).toEqual(serving);
    expect(envOnlyOf('sync').map((e) => e.env)).toEqual(envOnly);
    expect(envOnlyOf('sample-feed')).toEqual([]);
    expect(envOnlyOf('serve').find((e) => e.env === 'LIVEFEED_CORS_ORIGINS')?.help).toBe(
      'comma list of origins allowed by CORS (default (same origin))',
    );
  });
});

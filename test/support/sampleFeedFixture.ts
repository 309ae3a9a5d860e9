import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { createTestKeyHome, signFile, type TestKeyHome, writeJsonDump } from './archives.js';
import { type RawResponse, rawRequest } from './rawHttp.js';

/** A token the sample feed does not accept unless told to (40 characters, like upstream's). */
export const OTHER_TOKEN = 'abcdefghijABCDEFGHIJ0123456789abcdefghij';
/** The bytes served as replication packet 7 (the server does not look inside files). */
export const PACKET_BYTES = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 31 + 7) % 256));

/** The sample feed server of {@link useSampleFeedFixture} over its small feed folder. */
export interface SampleFeedFixture {
  /** The temporary folder; the feed root is its `feed` folder, `secret.txt` lies beside it. */
  tmp: string;
  root: string;
  keyHome: TestKeyHome;
  feed: SampleFeed;
  /** `http://127.0.0.1:<port>` of the server. */
  origin: string;
  /** GET (or `method`) of `path` under the feed root, with `token` (default the sample token) unless null. */
  get(
    path: string,
    options?: { token?: string | null; method?: string; headers?: Record<string, string> },
  ): Promise<RawResponse>;
}

/**
 * Registers the suite's hooks: a feed folder with JSON dumps of packet 5 (artist signed, area not),
 * replication packet 7 (signed) and the test-deployment name `replication-8.tar.bz2`, a file beside
 * the feed root that path traversal must never reach, and a sample feed server over the folder.
 */
export function useSampleFeedFixture(): SampleFeedFixture {
  const fixture = {
    get(path, options = {}) {
      const token = options.token === undefined ? SAMPLE_TOKEN : options.token;
      const query = token === null ? '' : `?token=${token}`;
      return rawRequest(fixture.origin!, `/api/musicbrainz/${path}${query}`, options);
    },
  } as Partial<SampleFeedFixture> & Pick<SampleFeedFixture, 'get'>;

  beforeAll(async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'lf-samplefeed-'));
    const root = join(tmp, 'feed');
    Object.assign(fixture, { tmp, root });
    await mkdir(root);
    await writeFile(join(tmp, 'secret.txt'), 'outside the feed root\n');
    const keyHome = await createTestKeyHome();
    fixture.keyHome = keyHome;
    const artist = await writeJsonDump(root, {
      packet: 5,
      entity: 'artist',
      lines: ['{"id":"x","name":"a"}'],
    });
    await signFile(artist.path, keyHome);
    await writeJsonDump(root, { packet: 5, entity: 'area', lines: ['{"id":"y","name":"b"}'] });
    await writeFile(join(root, 'replication-7-v2.tar.bz2'), PACKET_BYTES);
    await signFile(join(root, 'replication-7-v2.tar.bz2'), keyHome);
    await writeFile(join(root, 'replication-8.tar.bz2'), 'test deployment naming');
    fixture.feed = await startSampleFeed({ root });
    fixture.origin = new URL(fixture.feed.feedRoot).origin;
  });

  afterAll(async () => {
    await fixture.feed?.close();
    await fixture.keyHome?.close();
    if (fixture.tmp) await rm(fixture.tmp, { recursive: true, force: true });
  });
  return fixture as SampleFeedFixture;
}

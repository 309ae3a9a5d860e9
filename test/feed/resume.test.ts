import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FeedClient, type FeedClientOptions } from '../../src/feed/client.js';
import { FeedAuthError, FeedNetworkError } from '../../src/feed/errors.js';
import { PartialDownload, SIDECAR_MIN_BYTES } from '../../src/feed/partial.js';
import { SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';

const bytesOf = (length: number) => Buffer.from(Array.from({ length }, (_, i) => (i * 31 + (i >> 8)) % 256));
const BYTES = bytesOf(300_000);
const NAME = 'replication-42-v2.tar.bz2';
/** A file large enough for a sidecar (SIDECAR_MIN_BYTES): its bytes resume in another process. */
const BIG = bytesOf(SIDECAR_MIN_BYTES + 200_000);
const BIG_NAME = 'replication-41-v2.tar.bz2';

let tmp: string;
let feed: SampleFeed;
const clients: FeedClient[] = [];

function client(options: Partial<FeedClientOptions> = {}, root = feed.feedRoot): FeedClient {
  const made = new FeedClient({
    feedRoot: root,
    token: SAMPLE_TOKEN,
    retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
    timeoutMs: 5000,
    ...options,
  });
  clients.push(made);
  return made;
}

async function downloaded(
  result: Awaited<ReturnType<FeedClient['download']>>,
  expected = BYTES,
): Promise<Buffer> {
  if (result.status !== 'ok') throw new Error('missing');
  const bytes = await readFile(result.path);
  expect(result.size).toBe(expected.length);
  expect(result.sha256).toBe(createHash('sha256').update(expected).digest('hex'));
  expect(bytes.equals(expected)).toBe(true);
  return bytes;
}

/** A bare file server with configurable misbehaviour, for what the sample feed does right. */
async function customServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ root: string; server: Server }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { root: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/musicbrainz`, server };
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'lf-resume-'));
  await mkdir(join(tmp, 'feed'));
  await writeFile(join(tmp, 'feed', NAME), BYTES);
  await writeFile(join(tmp, 'feed', BIG_NAME), BIG);
  feed = await startSampleFeed({ root: join(tmp, 'feed') });
});

afterAll(async () => {
  await feed?.close();
  await rm(tmp, { recursive: true, force: true });
});

afterEach(async () => {
  feed.faults.clear();
  feed.requests.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const rangeRequests = (name = NAME) =>
  feed.requests.filter((r) => r.path.endsWith(name)).map((r) => r.status);

/** What a process that died mid-download leaves: `kept` bytes of `name` after a 200 head. */
async function crashedDownload(dir: string, name: string, bytes: Buffer, kept: number): Promise<void> {
  const partial = await PartialDownload.open(dir, name);
  const { mtime } = await stat(join(tmp, 'feed', name));
  await partial.begin(200, {
    'content-length': String(bytes.length),
    'accept-ranges': 'bytes',
    'last-modified': mtime.toUTCString(),
  });
  const writer = partial.writer();
  writer.end(bytes.subarray(0, kept));
  await once(writer, 'finish');
}

describe('FeedClient downloads', () => {
  it('resumes a body cut half way with a Range request and keeps only whole files', async () => {
    feed.faults.add({ path: NAME, fault: { kind: 'cut' } });
    const dir = join(tmp, 'cut');
    const result = await client().download(NAME, dir);
    expect((await downloaded(result)).equals(BYTES)).toBe(true);
    expect(rangeRequests()).toEqual([200, 206]);
    // Only the renamed, complete file is left; no partial bytes or sidecar.
    expect((await readdir(dir)).filter((n) => n !== 'partial')).toHaveLength(1);
    expect(await readdir(join(dir, 'partial'))).toEqual([]);
  });

  it("tells its tap the whole file's size on the first body and on a resumed one", async () => {
    feed.faults.add({ path: NAME, fault: { kind: 'cut' } });
    const begun: [number, number | null][] = [];
    const tap = {
      begin: (_path: string, offset: number, total: number | null) => begun.push([offset, total]),
      wrote: () => {},
    };
    await downloaded(await client().download(NAME, join(tmp, 'tapped'), undefined, tap));
    expect(begun).toHaveLength(2);
    expect(begun[0]).toEqual([0, BYTES.length]);
    expect(begun[1]![0]).toBeGreaterThan(0);
    expect(begun[1]![1]).toBe(BYTES.length);
  });

  it('resumes several times when the resumed transfer is cut too', async () => {
    feed.faults.add({ path: NAME, fault: { kind: 'cut', atByte: 50_000 }, times: 3 });
    const retries: string[] = [];
    const result = await client({ onRetry: (info) => retries.push(info.reason) }).download(
      NAME,
      join(tmp, 'cut3'),
    );
    await downloaded(result);
    expect(rangeRequests()).toEqual([200, 206, 206, 206]);
    expect(retries).toHaveLength(3);
  });

  it('resumes after an idle timeout on a stalled body', async () => {
    feed.faults.add({ path: NAME, fault: { kind: 'stall', atByte: 100_000 } });
    const result = await client({ idleTimeoutMs: 300 }).download(NAME, join(tmp, 'stall'));
    await downloaded(result);
    expect(rangeRequests()).toEqual([200, 206]);
  });

  it('completes a slow trickle that never goes idle for long', async () => {
    feed.faults.add({ path: NAME, fault: { kind: 'trickle', chunkBytes: 32_768, intervalMs: 10 } });
    await downloaded(await client({ idleTimeoutMs: 1000 }).download(NAME, join(tmp, 'trickle')));
    expect(rangeRequests()).toEqual([200]);
  });

  it('resumes bytes a crashed process left on disk, re-hashing them', async () => {
    const dir = join(tmp, 'crash');
    await crashedDownload(dir, BIG_NAME, BIG, 123_457);
    expect((await readdir(join(dir, 'partial'))).sort()).toEqual([
      expect.stringMatching(/\.json$/),
      expect.stringMatching(/\.part$/),
    ]);
    await downloaded(await client().download(BIG_NAME, dir), BIG);
    expect(rangeRequests(BIG_NAME)).toEqual([206]);
    expect(await readdir(join(dir, 'partial'))).toEqual([]);
  });

  it('fetches a small file whole again after a crash: it has no sidecar to resume from', async () => {
    const dir = join(tmp, 'crash-small');
    await crashedDownload(dir, NAME, BYTES, 123_457);
    expect(await readdir(join(dir, 'partial'))).toEqual([expect.stringMatching(/\.part$/)]);
    await downloaded(await client().download(NAME, dir));
    expect(rangeRequests()).toEqual([200]);
    expect(await readdir(join(dir, 'partial'))).toEqual([]);
  });

  it('resumes a small file across processes when its client asks for sidecars at any size', async () => {
    const dir = join(tmp, 'crash-small-sidecar');
    feed.faults.add({ path: NAME, fault: { kind: 'cut', atByte: 100_000 }, times: Infinity });
    await expect(client({ sidecarMinBytes: 0, retry: { attempts: 1 } }).download(NAME, dir)).rejects.toThrow(
      FeedNetworkError,
    );
    feed.faults.clear();
    await downloaded(await client({ sidecarMinBytes: 0 }).download(NAME, dir));
    expect(rangeRequests()).toEqual([200, 206]);
  });

  it('starts over when the file changed since the kept bytes (If-Range does not match)', async () => {
    const dir = join(tmp, 'changed');
    const partial = await PartialDownload.open(dir, BIG_NAME);
    await partial.begin(200, {
      'content-length': String(BIG.length + 5),
      'accept-ranges': 'bytes',
      etag: '"old"',
    });
    const writer = partial.writer();
    writer.end(Buffer.alloc(1000, 1));
    await once(writer, 'finish');
    await downloaded(await client().download(BIG_NAME, dir), BIG);
    // The server saw the old validator in If-Range and sent the whole new file.
    expect(rangeRequests(BIG_NAME)).toEqual([200]);
  });

  it('drops kept bytes that a 206 does not continue, and fetches whole', async () => {
    const ranges: (string | undefined)[] = [];
    let requests = 0;
    const { root, server } = await customServer((req, res) => {
      requests++;
      ranges.push(req.headers.range);
      const headers = { 'accept-ranges': 'bytes', etag: '"v1"' };
      if (requests === 1) {
        res.writeHead(200, { ...headers, 'content-length': BYTES.length });
        res.write(BYTES.subarray(0, 5000));
        setTimeout(() => res.destroy(), 50);
      } else if (requests === 2) {
        // Claims another start than asked for.
        res.writeHead(206, {
          ...headers,
          'content-length': 10,
          'content-range': `bytes 0-9/${BYTES.length}`,
        });
        res.end(BYTES.subarray(0, 10));
      } else res.writeHead(200, { ...headers, 'content-length': BYTES.length }).end(BYTES);
    });
    try {
      await downloaded(await client({}, root).download(NAME, join(tmp, 'badrange')));
      expect(ranges).toEqual([undefined, 'bytes=5000-', undefined]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('fetches whole again when the server does not announce byte ranges', async () => {
    let requests = 0;
    const ranges: (string | undefined)[] = [];
    const { root, server } = await customServer((req, res) => {
      requests++;
      ranges.push(req.headers.range);
      res.writeHead(200, { 'content-length': BYTES.length, 'last-modified': new Date(0).toUTCString() });
      if (requests === 1) {
        res.write(BYTES.subarray(0, 1000));
        setTimeout(() => res.destroy(), 50);
      } else res.end(BYTES);
    });
    try {
      await downloaded(await client({}, root).download(NAME, join(tmp, 'noranges')));
      expect(ranges).toEqual([undefined, undefined]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('starts over when the server answers a range request with the whole file', async () => {
    let requests = 0;
    const ranges: (string | undefined)[] = [];
    const { root, server } = await customServer((req, res) => {
      requests++;
      ranges.push(req.headers.range);
      res.writeHead(200, { 'content-length': BYTES.length, 'accept-ranges': 'bytes', etag: '"v1"' });
      if (requests === 1) {
        res.write(BYTES.subarray(0, 5000));
        setTimeout(() => res.destroy(), 50);
      } else res.end(BYTES);
    });
    try {
      await downloaded(await client({}, root).download(NAME, join(tmp, 'ignores')));
      expect(ranges).toEqual([undefined, 'bytes=5000-']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('gives up after the retry budget with the reason, keeping the partial bytes for later', async () => {
    feed.faults.add({ path: BIG_NAME, fault: { kind: 'cut', atByte: 10 }, times: Infinity });
    const dir = join(tmp, 'budget');
    await expect(client().download(BIG_NAME, dir)).rejects.toThrow(FeedNetworkError);
    expect(rangeRequests(BIG_NAME)).toHaveLength(4);
    // The bytes and their sidecar: a later process resumes them.
    expect((await readdir(join(dir, 'partial'))).sort()).toHaveLength(2);
    feed.faults.clear();
    await downloaded(await client().download(BIG_NAME, dir), BIG);
    expect(rangeRequests(BIG_NAME).at(-1)).toBe(206);
  });

  it('fails at once on a rejected token, without retries', async () => {
    feed.faults.add({ path: NAME, fault: { kind: 'wrong-token' }, times: Infinity });
    const retries: unknown[] = [];
    await expect(
      client({ onRetry: (r) => retries.push(r) }).download(NAME, join(tmp, 'token')),
    ).rejects.toThrow(FeedAuthError);
    expect(rangeRequests()).toEqual([403]);
    expect(retries).toEqual([]);
  });

  it('honours Retry-After on 429 and 503', async () => {
    feed.faults.add({ path: 'replication-info', fault: { kind: 'status', status: 429, retryAfter: 1 } });
    feed.faults.add({ path: 'replication-info', fault: { kind: 'status', status: 503, retryAfter: 0 } });
    const delays: number[] = [];
    const latest = await client({
      retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 1000 },
      onRetry: (info) => delays.push(info.delayMs),
    }).replicationInfo();
    expect(latest).toBe(42);
    expect(delays).toEqual([1000, 0]);
  });
});

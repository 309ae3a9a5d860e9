import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultPlan } from '../../src/samplefeed/faults.js';
import { SAMPLE_TOKEN, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { rawRequest } from '../support/rawHttp.js';

const BYTES = Buffer.from(Array.from({ length: 40_000 }, (_, i) => (i * 7 + 3) % 256));
const PACKET = 'replication-9-v2.tar.bz2';

let tmp: string;
let feed: SampleFeed;
let origin: string;

const get = (path: string, headers: Record<string, string> = {}) =>
  rawRequest(origin, `/api/musicbrainz/${path}?token=${SAMPLE_TOKEN}`, { headers });

/** GET that resolves with what arrived before the connection ended, and how it ended. */
function getPartial(
  path: string,
): Promise<{ status: number; length: number; declared: number; aborted: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}/api/musicbrainz/${path}?token=${SAMPLE_TOKEN}`,
      { agent: false },
      (res) => {
        let length = 0;
        let aborted = false;
        res.on('data', (chunk: Buffer) => {
          length += chunk.length;
        });
        res.on('aborted', () => {
          aborted = true;
        });
        res.on('error', () => {
          aborted = true;
        });
        res.on('close', () =>
          resolve({
            status: res.statusCode ?? 0,
            length,
            declared: Number(res.headers['content-length']),
            aborted,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'lf-faults-'));
  await mkdir(join(tmp, 'feed'));
  await writeFile(join(tmp, 'feed', PACKET), BYTES);
  feed = await startSampleFeed({ root: join(tmp, 'feed') });
  origin = new URL(feed.feedRoot).origin;
});

afterAll(async () => {
  await feed?.close();
  await rm(tmp, { recursive: true, force: true });
});

afterEach(() => feed.faults.clear());

describe('sample feed fault injection', () => {
  it('answers a status with Retry-After for the given number of requests, then normally', async () => {
    feed.faults.add({
      path: 'replication-info',
      fault: { kind: 'status', status: 503, retryAfter: 7 },
      times: 2,
    });
    const first = await get('replication-info');
    const second = await get('replication-info');
    const third = await get('replication-info');
    expect([first.status, second.status, third.status]).toEqual([503, 503, 200]);
    expect(first.headers['retry-after']).toBe('7');
    expect(feed.faults.applied).toEqual([
      { path: 'replication-info', kind: 'status' },
      { path: 'replication-info', kind: 'status' },
    ]);
  });

  it('lets `skip` requests through first and matches patterns', async () => {
    feed.faults.add({ path: /\.tar\.bz2$/, fault: { kind: 'status', status: 500 }, skip: 1 });
    expect((await get(PACKET)).status).toBe(200);
    expect((await get(PACKET)).status).toBe(500);
    expect((await get(PACKET)).status).toBe(200);
  });

  it('answers 403 like a revoked token whatever token was sent', async () => {
    feed.faults.add({ path: PACKET, fault: { kind: 'wrong-token' } });
    const answer = await get(PACKET);
    expect(answer.status).toBe(403);
    expect(answer.body.toString()).toBe('Provided access token is invalid!\n');
  });

  it('resets the connection before any response', async () => {
    feed.faults.add({ path: 'replication-info', fault: { kind: 'reset' } });
    await expect(get('replication-info')).rejects.toThrow(/socket hang up|ECONNRESET/);
  });

  it('cuts the body half way while announcing the full length', async () => {
    feed.faults.add({ path: PACKET, fault: { kind: 'cut' } });
    const answer = await getPartial(PACKET);
    expect(answer.status).toBe(200);
    expect(answer.declared).toBe(BYTES.length);
    expect(answer.length).toBe(BYTES.length / 2);
    expect(answer.aborted).toBe(true);
  });

  it('cuts a range request half way through the range', async () => {
    feed.faults.add({ path: PACKET, fault: { kind: 'cut', atByte: 100 } });
    const answer = await new Promise<number>((resolve) => {
      const req = request(`${origin}/api/musicbrainz/${PACKET}?token=${SAMPLE_TOKEN}`, {
        agent: false,
        headers: { range: 'bytes=30000-' },
      });
      req.on('response', (res) => {
        let length = 0;
        res.on('data', (c: Buffer) => {
          length += c.length;
        });
        res.on('close', () => resolve(length));
        res.on('error', () => {});
      });
      req.end();
    });
    expect(answer).toBe(100);
  });

  it('inverts one byte of a corrupted body and keeps its length', async () => {
    feed.faults.add({ path: PACKET, fault: { kind: 'corrupt', atByte: 1234 } });
    const answer = await get(PACKET);
    expect(answer.body.length).toBe(BYTES.length);
    const differing = [...answer.body].flatMap((b, i) => (b === BYTES[i] ? [] : [i]));
    expect(differing).toEqual([1234]);
    expect(answer.body[1234]).toBe(BYTES[1234]! ^ 0xff);
  });

  it('trickles the whole body slowly', async () => {
    feed.faults.add({ path: PACKET, fault: { kind: 'trickle', chunkBytes: 8192, intervalMs: 5 } });
    const answer = await get(PACKET);
    expect(answer.body.equals(BYTES)).toBe(true);
  });

  it('stalls after some bytes with the connection open', async () => {
    feed.faults.add({ path: PACKET, fault: { kind: 'stall', atByte: 1000 } });
    const received = await new Promise<number>((resolve) => {
      const req = request(
        `${origin}/api/musicbrainz/${PACKET}?token=${SAMPLE_TOKEN}`,
        { agent: false },
        (res) => {
          let length = 0;
          res.on('data', (c: Buffer) => {
            length += c.length;
          });
          res.on('error', () => {});
          // No byte for a while: the client gives up, as an idle timeout would.
          setTimeout(() => {
            req.destroy();
            resolve(length);
          }, 200);
        },
      );
      req.end();
    });
    expect(received).toBe(1000);
    // The server is fine afterwards.
    expect((await get(PACKET)).body.equals(await readFile(join(tmp, 'feed', PACKET)))).toBe(true);
  });

  it('keeps plans independent of each other', () => {
    const plan = new FaultPlan().add({
      path: (p) => p.endsWith('.asc'),
      fault: { kind: 'reset' },
      times: Infinity,
    });
    expect(plan.take('a.asc')?.kind).toBe('reset');
    expect(plan.take('a.asc')?.kind).toBe('reset');
    expect(plan.take('a')).toBeUndefined();
    expect(plan.pending).toBe(1);
  });
});

import { expect, it } from 'vitest';
import type { FaultRule } from '../../src/samplefeed/faults.js';
import { DUMP, OTHER_DUMP, useFaultFeed } from '../support/faultFeed.js';
import { describeStores, halfDumpsOf, snapshotStore } from '../support/stores.js';

/**
 * Issue 5, network faults: a sync through each fault the sample feed injects ends in exactly the
 * database (and kept files) of an undisturbed sync into SQLite (test/support/faultFeed.ts), on
 * both stores (issue 17). Failures that last, outages and the token: faultRecovery.test.ts.
 */
const suite = useFaultFeed();

describeStores('a sync through each network fault equals an undisturbed sync', (stores) => {
  const transient: [string, FaultRule[]][] = [
    ['5xx answers', [{ path: DUMP, fault: { kind: 'status', status: 500 }, times: 2 }]],
    ['502 on a signature', [{ path: `${DUMP}.asc`, fault: { kind: 'status', status: 502 } }]],
    ['429 with Retry-After', [{ path: DUMP, fault: { kind: 'status', status: 429, retryAfter: 0 } }]],
    [
      '503 with Retry-After on replication-info',
      [{ path: 'replication-info', fault: { kind: 'status', status: 503, retryAfter: 0 } }],
    ],
    [
      'connection resets on replication-info',
      [{ path: 'replication-info', fault: { kind: 'reset' }, times: 2 }],
    ],
    [
      'a maintenance page (200, HTML) on replication-info',
      [
        {
          path: 'replication-info',
          fault: {
            kind: 'status',
            status: 200,
            body: '<html>Down for maintenance</html>',
            contentType: 'text/html',
          },
          times: 2,
        },
      ],
    ],
    ['a connection reset on an archive', [{ path: OTHER_DUMP, fault: { kind: 'reset' } }]],
    ['a slow trickle', [{ path: DUMP, fault: { kind: 'trickle', chunkBytes: 4096, intervalMs: 2 } }]],
  ];
  it.each(transient)('%s', async (_name, rules) => {
    for (const rule of rules) suite.feed.faults.add(rule);
    const run = await suite.runSync(stores);
    expect(run.error).toBeUndefined();
    expect(run.reports[0]!.problems).toEqual([]);
    expect(suite.feed.faults.pending).toBe(0);
    await suite.expectSameAsReference(run);
  });

  it('a body cut half way: resumed with a Range request', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'cut' } });
    const run = await suite.runSync(stores);
    expect(suite.statuses(DUMP)).toEqual([200, 206]);
    expect(run.retries).toHaveLength(1);
    await suite.expectSameAsReference(run);
  });

  it('a stalled body: idle timeout, then resumed', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'stall' } });
    const run = await suite.runSync(stores, { idleTimeoutMs: 300 });
    expect(suite.statuses(DUMP)).toEqual([200, 206]);
    expect(run.retries[0]).toMatch(/timeout/i);
    await suite.expectSameAsReference(run);
  });

  it('corrupted bytes in an archive: the signature fails, the file is downloaded again', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'corrupt' } });
    const run = await suite.runSync(stores);
    expect(suite.statuses(DUMP)).toEqual([200, 200]);
    expect(suite.events(run, 'redownload')).toHaveLength(1);
    await suite.expectSameAsReference(run);
  });

  it('corrupted bytes without signature checks: the archive does not decompress, downloaded again', async () => {
    suite.feed.faults.add({ path: DUMP, fault: { kind: 'corrupt' } });
    const run = await suite.runSync(stores, { verify: 'off' });
    expect(run.reports[0]!.problems).toEqual([]);
    const [redownload] = suite.events(run, 'redownload');
    // The decoder's verdict, or (xz program) the stream teardown that can arrive before it.
    expect(redownload).toMatchObject({
      packet: 501,
      file: DUMP,
      err: expect.stringMatching(/corrupt|LZMA|destroyed/i),
    });
    // Same content; only the signature column says UNVERIFIED.
    const snapshot = await snapshotStore(run.db);
    for (const table of ['packets', 'dumps', 'changes', 'quarantine', 'events']) {
      expect(snapshot[table], table).toEqual(suite.reference[table]);
    }
    expect(await halfDumpsOf(run.db)).toEqual([]);
  });

  it('corrupted bytes in a signature: downloaded again', async () => {
    suite.feed.faults.add({ path: `${DUMP}.asc`, fault: { kind: 'corrupt' } });
    const run = await suite.runSync(stores);
    expect(suite.events(run, 'redownload')).toHaveLength(1);
    await suite.expectSameAsReference(run);
  });

  it('a dump that is not there yet (404) is fetched once it appears', async () => {
    suite.feed.faults.add({
      path: DUMP,
      fault: { kind: 'status', status: 404, body: "Can't find specified JSON dump!" },
    });
    // Ten minutes after the packet's TIMESTAMP: a 404 then can mean "not yet" (FEED.md, Errors).
    const start = Date.now();
    const base = Date.parse('2026-05-11T21:24:26Z');
    const run = await suite.runSync(stores, { now: () => new Date(base + Date.now() - start) });
    // Later packets' dumps settle it: asked once more in the same pass, and found.
    expect(suite.statuses(DUMP)).toEqual([404, 200]);
    await suite.expectSameAsReference(run);
  });
});

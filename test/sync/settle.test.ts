import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { writeJsonDump } from '../support/archives.js';
import { syncContext, tempDir } from '../support/harness.js';

const ARTIST = (id: string, name: string) => JSON.stringify({ id, name, 'sort-name': name, type: 'Person' });
const AREA = (id: string, name: string) => JSON.stringify({ id, name, type: 'City' });
const A1 = '00000000-0000-4000-8000-000000000001';
const A2 = '00000000-0000-4000-8000-000000000002';

/** PostgreSQL timestamptz text of a Date. */
function pgText(date: Date): string {
  return `${date.toISOString().replace('T', ' ').replace('Z', '')}+00`;
}

function statusOf(
  ctx: Awaited<ReturnType<typeof syncContext>>,
  packet: number,
  entity: string,
): string | undefined {
  return (
    ctx.store.sqlite
      .prepare('SELECT status FROM dumps WHERE packet = ? AND entity = ?')
      .get(packet, entity) as { status: string } | undefined
  )?.status;
}

describe('settling missing JSON dumps (FEED.md, Errors: a 404 can mean "not yet")', () => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let ctx: Awaited<ReturnType<typeof syncContext>>;
  let clock: Date;

  beforeEach(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    feed = await startSampleFeed({ root: feedDir.dir });
    clock = new Date('2026-11-22T12:00:00Z');
    ctx = await syncContext({
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist'],
      now: () => clock,
    });
  });
  afterEach(async () => {
    ctx.store.close();
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  it('keeps a fresh packet PENDING, stores a late dump, and settles once a later packet has a dump', async () => {
    const fresh = pgText(new Date(clock.getTime() - 40 * 60_000));
    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: fresh,
    });

    let report = await syncOnce(ctx, { from: 10 });
    expect(statusOf(ctx, 10, 'artist')).toBe('SYNCED');
    expect(statusOf(ctx, 10, 'area')).toBe('PENDING');
    expect(report.completed).toEqual([]);
    expect(report.pending).toBe(1);

    // The area dump lands late: the next poll stores it and the packet completes.
    await writeJsonDump(feedDir.dir, {
      packet: 10,
      entity: 'area',
      lines: [AREA(A2, 'Town')],
      timestamp: fresh,
    });
    report = await syncOnce(ctx);
    expect(statusOf(ctx, 10, 'area')).toBe('SYNCED');
    expect(report.completed).toEqual([10]);

    // Packet 11 has only an artist dump; once packet 12's dump exists, 11's area is asked once more and settled.
    const t11 = pgText(new Date(clock.getTime() - 10 * 60_000));
    await writeJsonDump(feedDir.dir, {
      packet: 11,
      entity: 'artist',
      lines: [ARTIST(A1, 'One again')],
      timestamp: t11,
    });
    report = await syncOnce(ctx);
    expect(statusOf(ctx, 11, 'area')).toBe('PENDING');

    await writeJsonDump(feedDir.dir, {
      packet: 12,
      entity: 'area',
      lines: [AREA(A2, 'Town again')],
      timestamp: t11,
    });
    const before = feed.requests.length;
    report = await syncOnce(ctx);
    expect(statusOf(ctx, 11, 'area')).toBe('NO_CHANGES');
    expect(report.completed).toContain(11);
    // The 404 that settled it was asked after packet 12's dump was seen.
    const paths = feed.requests.slice(before).map((r) => r.path);
    expect(paths.lastIndexOf('/api/musicbrainz/json-dumps/json-dump-11/area.tar.xz')).toBeGreaterThan(
      paths.indexOf('/api/musicbrainz/json-dumps/json-dump-12/area.tar.xz'),
    );
    // Packet 12 itself is newest: its missing artist dump stays PENDING.
    expect(statusOf(ctx, 12, 'artist')).toBe('PENDING');
  });

  it('settles by TIMESTAMP age without a later packet', async () => {
    const old = pgText(new Date(clock.getTime() - 3 * 3_600_000));
    await writeJsonDump(feedDir.dir, {
      packet: 20,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: old,
    });
    const report = await syncOnce(ctx, { from: 20 });
    expect(statusOf(ctx, 20, 'area')).toBe('NO_CHANGES');
    expect(report.completed).toEqual([20]);
  });

  it('never declares NO_CHANGES for a packet with no evidence at all', async () => {
    await writeJsonDump(feedDir.dir, {
      packet: 31,
      entity: 'artist',
      lines: [ARTIST(A1, 'One')],
      timestamp: pgText(clock),
    });
    await syncOnce(ctx, { from: 30 });
    // Packet 30 has no file at all and 31 is fresh, but 31's dump is evidence that 30 is settled.
    expect(statusOf(ctx, 30, 'area')).toBe('NO_CHANGES');
    expect(statusOf(ctx, 31, 'area')).toBe('PENDING');
  });
});

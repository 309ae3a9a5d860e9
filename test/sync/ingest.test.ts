import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import { syncOnce } from '../../src/sync/worker.js';
import { writeJsonDump } from '../support/archives.js';
import { changesInFile } from '../support/dbSnapshot.js';
import { gql, syncContext, tempDir, testApp } from '../support/harness.js';

const OLD = '2026-05-11 21:14:26.878674+00';
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('JSON dump lines as upstream writes them', () => {
  let feedDir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir: Awaited<ReturnType<typeof tempDir>>;
  let feed: SampleFeed;
  let ctx: Awaited<ReturnType<typeof syncContext>>;
  let report: Awaited<ReturnType<typeof syncOnce>>;
  const tricky = `Line\u2028sep \u2029para \u0085nel`;
  const huge = 'x'.repeat(3 * 1024 * 1024);

  beforeAll(async () => {
    feedDir = await tempDir('feed-');
    dataDir = await tempDir();
    await writeJsonDump(feedDir.dir, {
      packet: 5,
      entity: 'artist',
      timestamp: OLD,
      lines: [
        JSON.stringify({ id: id(1), name: tricky }),
        `{"name": "Carriage\rReturn",   "id":"${id(2)}"}`,
        JSON.stringify({ id: id(3), name: 'Huge', annotation: huge }),
        'this is not json',
        JSON.stringify({ name: 'No id' }),
        JSON.stringify({ id: 'not-a-uuid', name: 'Bad id' }),
        JSON.stringify({ id: id(4), title: 'Last' }),
      ],
    });
    await writeJsonDump(feedDir.dir, {
      packet: 5,
      entity: 'area',
      timestamp: OLD,
      replicationSequence: 4,
      lines: [JSON.stringify({ id: id(9) })],
    });
    await writeJsonDump(feedDir.dir, {
      packet: 5,
      entity: 'label',
      timestamp: OLD,
      lines: [JSON.stringify({ id: id(10), name: 'L' })],
    });
    feed = await startSampleFeed({ root: feedDir.dir });
    ctx = await syncContext({
      feedRoot: feed.feedRoot,
      dataDir: dataDir.dir,
      entities: ['area', 'artist', 'label'],
    });
    report = await syncOnce(ctx, { from: 5 });
  });
  afterAll(async () => {
    ctx.store.close();
    await feed.close();
    await feedDir.cleanup();
    await dataDir.cleanup();
  });

  it('checkpoints the WAL at the end of the pass: the database file alone holds the changes', () => {
    // The sync defers checkpoints (db/checkpoint.ts); a copy of the file without its WAL shows
    // whether the pass-end checkpoint copied the dumps in.
    const live = ctx.store.sqlite.prepare('SELECT count(*) AS n FROM changes').get() as { n: number };
    expect(live.n).toBe(5); // artist 4, label 1; area failed
    expect(changesInFile(ctx.store.path, dataDir.dir)).toBe(5);
  });

  it('splits on \\n only and keeps U+2028, U+2029, U+0085 and \\r inside values', async () => {
    const app = testApp(ctx.store.path, dataDir.dir);
    const result = await gql(
      app,
      `{ changes(packet: 5, entity: ARTIST) { totalCount nodes { mbid position name } } }`,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.changes.nodes).toEqual([
      { mbid: id(1), position: 1, name: tricky },
      { mbid: id(2), position: 2, name: 'Carriage\rReturn' },
      { mbid: id(3), position: 3, name: 'Huge' },
      { mbid: id(4), position: 7, name: 'Last' },
    ]);
    const big = await gql(app, `query($m: ID!) { entity(mbid: $m) { latest { data } } }`, { m: id(3) });
    expect(big.data!.entity.latest.data.annotation).toHaveLength(huge.length);
    app.store.close();
  });

  it('stores a well-formed line byte for byte', () => {
    const row = ctx.store.sqlite.prepare('SELECT data FROM changes WHERE mbid = ?').get(id(1)) as {
      data: string;
    };
    expect(row.data).toBe(JSON.stringify({ id: id(1), name: tricky }));
  });

  it('quarantines malformed lines with line number and reason, and stores the rest', () => {
    const rows = ctx.store.sqlite
      .prepare('SELECT line, raw, reason FROM quarantine WHERE packet = 5 ORDER BY line')
      .all() as { line: number; raw: string; reason: string }[];
    expect(rows.map((r) => [r.line, r.reason.split(':')[0]])).toEqual([
      [4, 'not JSON'],
      [5, 'no "id"'],
      [6, 'invalid MBID "not-a-uuid"'],
    ]);
    expect(rows[0]!.raw).toBe('this is not json');
    expect(
      ctx.store.sqlite
        .prepare(
          "SELECT change_count AS c, quarantine_count AS q FROM dumps WHERE packet = 5 AND entity = 'artist'",
        )
        .get(),
    ).toEqual({ c: 4, q: 3 });
  });

  it('fails a dump whose REPLICATION_SEQUENCE differs, naming packet and entity, and stores the others', () => {
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatchObject({ packet: 5, file: 'json-dumps/json-dump-5/area.tar.xz' });
    expect(report.problems[0]!.reason).toMatch(
      /JSON dump area of packet 5: REPLICATION_SEQUENCE is 4, expected 5/,
    );
    const area = ctx.store.sqlite
      .prepare("SELECT status, error FROM dumps WHERE packet = 5 AND entity = 'area'")
      .get() as { status: string; error: string };
    expect(area.status).toBe('FAILED');
    expect(ctx.store.sqlite.prepare('SELECT count(*) AS n FROM changes WHERE mbid = ?').get(id(9))).toEqual({
      n: 0,
    });
    expect(
      ctx.store.sqlite.prepare("SELECT status FROM dumps WHERE packet = 5 AND entity = 'label'").get(),
    ).toEqual({ status: 'SYNCED' });
  });

  it('retries a FAILED dump on the next run and stores it once fixed', async () => {
    await writeJsonDump(feedDir.dir, {
      packet: 5,
      entity: 'area',
      timestamp: OLD,
      lines: [JSON.stringify({ id: id(9), name: 'Fixed' })],
    });
    const again = await syncOnce(ctx, { from: 5 });
    expect(again.problems).toEqual([]);
    expect(again.completed).toEqual([5]);
    expect(ctx.store.sqlite.prepare('SELECT count(*) AS n FROM changes WHERE mbid = ?').get(id(9))).toEqual({
      n: 1,
    });
  });
});

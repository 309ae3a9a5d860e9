import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseByteSize } from '../../src/config.js';
import { DEFAULT_MAX_BYTES } from '../../src/feed/jsonDump.js';
import { parseKeepFiles } from '../../src/files/retentionPolicy.js';
import { BUNDLED_FEED_ROOT, type SampleFeed, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { syncOnce } from '../../src/sync/worker.js';
import { pgTimestampSeconds } from '../support/archives.js';
import { syncContextOn, tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

const manifest = readBundledManifest();
const dumps = manifest.packets.flatMap((p) =>
  Object.values(p.jsonDumps).map((d) => ({ ...d, packet: p.number, timestamp: p.timestamp })),
);

describe('--keep-files and --max-dump-bytes (configuration)', () => {
  it('parses counts, ages and all', () => {
    expect(parseKeepFiles('all')).toEqual({ kind: 'all' });
    expect(parseKeepFiles('48')).toEqual({ kind: 'packets', count: 48 });
    expect(parseKeepFiles('0')).toEqual({ kind: 'packets', count: 0 });
    expect(parseKeepFiles('7d')).toEqual({ kind: 'age', maxAgeMs: 7 * 86_400_000 });
    expect(parseKeepFiles('36h')).toEqual({ kind: 'age', maxAgeMs: 36 * 3_600_000 });
    expect(parseKeepFiles('2w')).toEqual({ kind: 'age', maxAgeMs: 14 * 86_400_000 });
    for (const bad of ['', '-1', '7x', '1.5d', 'some'])
      expect(() => parseKeepFiles(bad), bad).toThrow(/must be all/);
  });

  it('reads flag, then env, then the default', () => {
    expect(loadConfig({}, {})).toMatchObject({ keepFiles: { kind: 'all' }, maxDumpBytes: DEFAULT_MAX_BYTES });
    expect(loadConfig({}, { LIVEFEED_KEEP_FILES: '48', LIVEFEED_MAX_DUMP_BYTES: '4GiB' })).toMatchObject({
      keepFiles: { kind: 'packets', count: 48 },
      maxDumpBytes: 4 * 2 ** 30,
    });
    expect(
      loadConfig({ keepFiles: '7d', maxDumpBytes: '500MB' }, { LIVEFEED_KEEP_FILES: '48' }),
    ).toMatchObject({
      keepFiles: { kind: 'age', maxAgeMs: 7 * 86_400_000 },
      maxDumpBytes: 500_000_000,
    });
    expect(parseByteSize('1234')).toBe(1234);
    expect(parseByteSize('1.5 KiB')).toBe(1536);
    expect(parseByteSize('lots')).toBeUndefined();
  });

  it('names the bad value and where it came from', () => {
    expect(() => loadConfig({ keepFiles: 'forever' }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ keepFiles: 'forever' }, {})).toThrow(/--keep-files forever: must be all/);
    expect(() => loadConfig({}, { LIVEFEED_MAX_DUMP_BYTES: '0' })).toThrow(
      /LIVEFEED_MAX_DUMP_BYTES=0: must be a positive size/,
    );
  });
});

// The configuration above reads no store; retention itself runs on both (issue 17).
describeStores('retention of kept archives', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  let ctx: SyncContext;

  async function open(): Promise<void> {
    data = await tempDir();
    db = await stores.create(data.dir);
    ctx = await syncContextOn(db.store, { feedRoot: feed.feedRoot, dataDir: data.dir });
  }
  const kept = (name: string) => existsSync(join(data.dir, 'files', name));
  const storedPath = async (name: string) =>
    (await db.rows<{ p: string | null }>('SELECT stored_path AS p FROM feed_files WHERE name = ?', name))[0]!
      .p;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  });
  afterAll(() => feed.close());
  afterEach(async () => {
    await ctx?.feed.client.close();
    await db?.close();
    await data?.cleanup();
  });

  it('by packet count: applied after each pass; signatures and records stay', async () => {
    await open();
    ctx.policy.keepFiles = { kind: 'packets', count: 3 };
    const report = await syncOnce(ctx);
    expect(report.problems).toEqual([]);
    for (const dump of dumps) {
      const stays = dump.packet > manifest.lastPacket - 3;
      expect(kept(dump.file), dump.file).toBe(stays);
      expect(await storedPath(dump.file), dump.file).toBe(stays ? join('files', dump.file) : null);
      expect(kept(dump.signature), dump.signature).toBe(true);
    }
    expect(await db.rows('SELECT count(*) AS n FROM feed_files')).toEqual([{ n: dumps.length }]);
    // A later pass fetches nothing again and removes nothing more.
    const before = feed.requests.length;
    expect((await syncOnce(ctx)).dumpsStored).toBe(0);
    expect(feed.requests.length - before).toBe(1);
  });

  it('by age of the packet TIMESTAMP', async () => {
    await open();
    await syncOnce(ctx);
    const now = new Date('2026-05-12T00:00:00Z');
    const cutoff = now.getTime() - 12 * 3_600_000;
    const result = await db.store.applyRetention(data.dir, { kind: 'age', maxAgeMs: 12 * 3_600_000 }, now);
    const expired = dumps.filter((d) => pgTimestampSeconds(d.timestamp)! * 1000 < cutoff);
    expect(expired.length).toBeGreaterThan(0);
    expect(expired.length).toBeLessThan(dumps.length);
    expect(result).toEqual({ files: expired.length, bytes: expired.reduce((n, d) => n + d.bytes, 0) });
    for (const dump of dumps) expect(kept(dump.file), dump.file).toBe(!expired.includes(dump));
    expect(await db.store.applyRetention(data.dir, { kind: 'age', maxAgeMs: 12 * 3_600_000 }, now)).toEqual({
      files: 0,
      bytes: 0,
    });
    expect(await db.store.applyRetention(data.dir, { kind: 'all' }, now)).toEqual({ files: 0, bytes: 0 });
    // The records stay; only the expired archives' stored paths are forgotten.
    for (const dump of dumps)
      expect(await storedPath(dump.file), dump.file).toBe(
        expired.includes(dump) ? null : join('files', dump.file),
      );
  });
});

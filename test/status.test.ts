import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { statusCommand } from '../src/cli/status.js';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/db/client.js';
import { sqliteReads } from '../src/db/reads.js';
import { DEFAULT_FRESHNESS } from '../src/ops/freshness.js';
import { collectStatus, renderStatus } from '../src/ops/statusReport.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../src/samplefeed/server.js';
import { tempDir } from './support/harness.js';
import { readBundledManifest } from './support/manifest.js';
import { type SyncedDatabase, syncedDatabase } from './support/synced.js';

const manifest = readBundledManifest();

/** Runs `livefeed status` in-process and returns its exit code and stdout. */
async function status(flags: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const chunks: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  try {
    const forceExit = (): never => {
      throw new Error('status never ends the process');
    };
    const code = await statusCommand.run({ config: loadConfig(flags, env), flags, args: [], forceExit });
    return { code, out: chunks.join('') };
  } finally {
    spy.mockRestore();
  }
}

describe('livefeed status', () => {
  let synced: SyncedDatabase;
  let feed: SampleFeed;
  beforeAll(async () => {
    synced = await syncedDatabase();
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    const store = openStore(synced.dbPath);
    const now = new Date().toISOString();
    const last = manifest.lastPacket;
    store.sqlite
      .prepare('INSERT INTO packets (number, created_at) VALUES (?, ?), (?, ?)')
      .run(last + 1, now, last + 2, now);
    store.sqlite
      .prepare(
        `INSERT INTO dumps (packet, entity, status, error, attempts, updated_at) VALUES
           (?, 'artist', 'FAILED', 'signature of json-dumps/json-dump-${last + 1}/artist.tar.xz is INVALID: bad', 3, ?),
           (?, 'area', 'PENDING', NULL, 0, ?)`,
      )
      .run(last + 1, now, last + 2, now);
    // Upstream answered 404 for this one: not published yet, which is no failed attempt.
    store.sqlite
      .prepare(
        `INSERT INTO dumps (packet, entity, status, attempts, checked_at, updated_at) VALUES (?, 'artist', 'PENDING', 0, ?, ?)`,
      )
      .run(last + 2, now, now);
    store.close();
  });
  afterAll(async () => {
    await feed.close();
    await synced.cleanup();
  });
  afterEach(() => vi.restoreAllMocks());

  it('collects the position, unfinished files and freshness', async () => {
    const store = openStore(synced.dbPath, { readonly: true });
    const facts = await collectStatus(sqliteReads(store), {
      display: store.path,
      demo: false,
      upstream: {
        kind: 'asked',
        latest: manifest.lastPacket + 2,
        where: 'https://feed.example/api/musicbrainz',
      },
      thresholds: DEFAULT_FRESHNESS,
    });
    store.close();
    expect(facts.local).toMatchObject({
      latest: { number: manifest.lastPacket },
      highest: manifest.lastPacket + 2,
      firstIncomplete: manifest.lastPacket + 1,
      packets: manifest.packets.length + 2,
      completed: manifest.packets.length,
    });
    expect(facts.files).toMatchObject({ pending: 2, failed: 1 });
    expect(facts.files.files.map((f) => [f.status, f.packet, f.file])).toEqual([
      ['FAILED', manifest.lastPacket + 1, 'json-dump artist'],
      ['PENDING', manifest.lastPacket + 2, 'json-dump area'],
      ['PENDING', manifest.lastPacket + 2, 'json-dump artist'],
    ]);
    const screen = renderStatus(facts, 80);
    expect(screen.split('\n').length).toBeLessThan(24);
    expect(screen).toContain(
      `upstream   latest packet ${manifest.lastPacket + 2} (asked https://feed.example/api/musicbrainz now, 2 packets ahead of local)`,
    );
    expect(screen).toContain('files      2 pending, 1 failed; 0 lines in quarantine');
    // A PENDING file shows what it waits for, never "attempts 0".
    expect(screen).toMatch(/^ {4}PENDING \d+ {2}json-dump area +not asked yet$/m);
    expect(screen).toMatch(/^ {4}PENDING \d+ {2}json-dump artist +not published upstream yet$/m);
    expect(screen).not.toContain('attempts 0');
    // The newest packet waits for a later packet's JSON dumps; nothing was stored behind readers.
    expect(screen).toMatch(new RegExp(`^  stream     served up to packet ${manifest.lastPacket - 1}$`, 'm'));
    // Only the demo's fixed snapshot is explained; a real feed's waiting head is news.
    expect(screen).not.toContain('fixed snapshot');
    expect(screen).toMatch(/freshness {2}CRITICAL: .*upstream latest \d+, 2 packets behind$/m);
    expect(screen).toMatch(/ {4}FAILED {2}\d+ {2}json-dump artist +attempts 3 {2}signature of .*…/);
    expect(screen.split('\n').every((line) => line.length <= 200)).toBe(true);
    // A replication packet counts its 404s as attempts: while it is not there, it says so.
    const replication = renderStatus({
      ...facts,
      files: {
        ...facts.files,
        files: [
          { packet: 9, file: 'replication packet', status: 'PENDING', error: null, attempts: 3, asked: 1 },
          { packet: 8, file: 'replication packet', status: 'MISSING', error: null, attempts: 40, asked: 1 },
        ],
      },
    });
    expect(replication).toMatch(/^ {4}PENDING 9 {2}replication packet +not published upstream yet$/m);
    expect(replication).toMatch(/^ {4}MISSING 8 {2}replication packet +missing upstream$/m);
    // A database whose stream has served nothing yet says so.
    const empty = renderStatus({
      ...facts,
      stream: { frontier: undefined, epoch: 0, lastRewritten: undefined },
    });
    expect(empty).toMatch(/^ {2}stream {5}nothing served yet$/m);
  });

  it('asks upstream (here the sample feed, with the token from the environment)', async () => {
    const { code, out } = await status(
      { db: synced.dbPath, feedUrl: feed.feedRoot, dataDir: synced.dir },
      { LIVEFEED_TOKEN: SAMPLE_TOKEN },
    );
    expect(code).toBe(0);
    expect(out).toContain(`livefeed status: ${synced.dbPath}\n`);
    expect(out).toContain(
      `latest packet ${manifest.lastPacket} (asked ${feed.feedRoot} now, 0 packets ahead of local)`,
    );
    expect(out).toContain(`latest complete packet ${manifest.lastPacket} (TIMESTAMP `);
    expect(out).not.toContain(SAMPLE_TOKEN);
  });

  it('with --offline shows what the sync last recorded', async () => {
    const { out } = await status({ db: synced.dbPath, offline: true, dataDir: synced.dir });
    expect(out).toMatch(
      new RegExp(`not asked \\(--offline\\); last seen by the sync: ${manifest.lastPacket} at \\d{4}-`),
    );
  });

  it('says when upstream cannot be asked, and goes on', async () => {
    const { code, out } = await status(
      { db: synced.dbPath, feedUrl: 'http://127.0.0.1:9/api/musicbrainz', dataDir: synced.dir },
      { LIVEFEED_TOKEN: SAMPLE_TOKEN },
    );
    expect(code).toBe(0);
    expect(out).toMatch(/upstream {3}could not ask http:\/\/127\.0\.0\.1:9\/api\/musicbrainz: /);
    expect(out).toContain('files      2 pending, 1 failed');
  });

  it('exits 1 when there is no database yet', async () => {
    const empty = await tempDir();
    const { code, out } = await status({ dataDir: empty.dir, offline: true });
    expect(code).toBe(1);
    expect(out).toMatch(/no database at .*livefeed\.db: nothing synced yet/);
    await empty.cleanup();
  });
});

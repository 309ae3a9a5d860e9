import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../src/samplefeed/server.js';
import { startSync } from '../support/cli.js';
import { tempDir } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { gidRedirectRow, writeReplicationPacket } from '../support/replicationArchives.js';
import { type SyncedFeed, syncFeedFolder, writeDeploymentFeed } from '../support/replicationFeeds.js';
import { describeStores, type TestDatabase } from '../support/stores.js';

const manifest = readBundledManifest();
const PACKET_FILE = /\/replication-\d+(-v2)?\.tar\.bz2(\.asc)?$/;

const expectedRemovals = () =>
  manifest.packets.flatMap((packet) =>
    (packet.replication?.removals ?? []).map((removal) => ({ packet: packet.number, ...removal })),
  );

/** Checks that every packet's replication packet is stored as the manifest says. */
async function expectAllStored(
  synced: SyncedFeed,
  format: 'V1' | 'V2',
  names: (packet: number) => string,
): Promise<void> {
  expect(synced.report.problems).toEqual([]);
  expect(synced.report.completed).toEqual(manifest.packets.map((packet) => packet.number));
  const stored = await synced.db.rows(
    `SELECT r.packet, r.status, r.format, r.row_count AS "rowCount", r.file_name AS "fileName", r.timestamp,
            f.signature, f.fingerprint
     FROM replication_packets r JOIN feed_files f ON f.name = r.file_name ORDER BY r.packet`,
  );
  expect(stored).toEqual(
    manifest.packets.map((packet) => ({
      packet: packet.number,
      status: 'SYNCED',
      format,
      rowCount: packet.replication!.rowCount,
      fileName: names(packet.number),
      timestamp: packet.timestamp.replace(' ', 'T').replace(/\+00$/, 'Z'),
      signature: 'VERIFIED',
      fingerprint: manifest.signingKeyFingerprint,
    })),
  );
  // Each replication packet and its signature were asked for exactly once, before the packet's dumps.
  const asked = synced.requests.filter((path) => PACKET_FILE.test(path));
  expect(asked).toEqual(
    manifest.packets.flatMap((packet) => [
      `/api/musicbrainz/${names(packet.number)}`,
      `/api/musicbrainz/${names(packet.number)}.asc`,
    ]),
  );
  expect(
    await synced.db.rows(
      'SELECT packet, mbid, entity, kind, merged_into AS "mergedInto" FROM removals ORDER BY packet, mbid',
    ),
  ).toEqual(expectedRemovals());
}

describeStores('replication packets in both deployments', (stores) => {
  let production: SyncedFeed;
  let testDeployment: SyncedFeed;
  let v1Feed: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    production = await syncFeedFolder(BUNDLED_FEED_ROOT, { deployment: 'production', stores });
    v1Feed = await tempDir('lf-v1-feed-');
    await writeDeploymentFeed(v1Feed.dir, manifest, { format: 'v1', deployment: 'test' });
    testDeployment = await syncFeedFolder(v1Feed.dir, { deployment: 'test', stores });
  }, 60_000);
  afterAll(async () => {
    await production?.cleanup();
    await testDeployment?.cleanup();
    await v1Feed?.cleanup();
  });

  it('production: fetches, verifies and stores every replication-N-v2.tar.bz2 of the bundled feed', async () => {
    await expectAllStored(
      production,
      'V2',
      (packet) => manifest.packets.find((p) => p.number === packet)!.replication!.file,
    );
    const files = await production.db.rows(
      `SELECT name, size, sha256 FROM feed_files WHERE name LIKE 'replication-%' ORDER BY name`,
    );
    expect(files).toEqual(
      manifest.packets.map((packet) => ({
        name: packet.replication!.file,
        size: packet.replication!.bytes,
        sha256: packet.replication!.sha256,
      })),
    );
  });

  it('test deployment: fetches replication-N.tar.bz2 (v1) and never a -v2 name', async () => {
    await expectAllStored(testDeployment, 'V1', (packet) => `replication-${packet}.tar.bz2`);
    expect(testDeployment.requests.some((path) => path.includes('-v2'))).toBe(false);
  });

  it('both store the same rows in the same apply order', async () => {
    const shape = 'SELECT packet, ord, seqid, xid, table_name, op FROM row_changes ORDER BY packet, ord';
    const rows = await production.db.rows(shape);
    expect(rows).toHaveLength(manifest.packets.reduce((sum, p) => sum + p.replication!.rowCount, 0));
    expect(await testDeployment.db.rows(shape)).toEqual(rows);
  });
});

describeStores('replication packets that are missing, skipped or off', (stores) => {
  let feed: Awaited<ReturnType<typeof tempDir>>;
  const missing = 186105;
  const missingFile = `replication-${missing}-v2.tar.bz2`;

  beforeAll(async () => {
    feed = await tempDir('lf-feed-');
    await cp(BUNDLED_FEED_ROOT, feed.dir, { recursive: true });
    await rm(join(feed.dir, missingFile));
    await rm(join(feed.dir, `${missingFile}.asc`));
  });
  afterAll(() => feed?.cleanup());

  it('a 404 stays PENDING while no later packet is known; the packet waits and is asked again on the next pass', async () => {
    // The first pass ends at the missing packet, so no later packet is there: never MISSING.
    const upTo = await syncFeedFolder(feed.dir, { deployment: 'production', passes: 2, to: missing, stores });
    try {
      for (const pass of upTo.passRequests) expect(pass).toContain(`/api/musicbrainz/${missingFile}`);
      expect(upTo.report.problems).toEqual([]);
      expect(
        await upTo.db.rows('SELECT status, attempts FROM replication_packets WHERE packet = ?', missing),
      ).toEqual([{ status: 'PENDING', attempts: 2 }]);
      expect(await upTo.db.rows('SELECT synced_at FROM packets WHERE number = ?', missing)).toEqual([
        { synced_at: null },
      ]);
    } finally {
      await upTo.cleanup();
    }
  });

  it('the whole feed: the 404 is PENDING in the pass that met it, and its packet is not complete', async () => {
    const synced = await syncFeedFolder(feed.dir, { deployment: 'production', stores });
    try {
      expect(synced.report.problems).toEqual([]);
      expect(synced.report.completed).not.toContain(missing);
      expect(
        await synced.db.rows(
          'SELECT status, row_count AS n FROM replication_packets WHERE packet = ?',
          missing,
        ),
      ).toEqual([{ status: 'PENDING', n: 0 }]);
      expect(synced.requests).toContain(`/api/musicbrainz/${missingFile}`);
    } finally {
      await synced.cleanup();
    }
  });

  it('skipped packets (skipPackets) are not fetched and still complete', async () => {
    const skipped = [186110, 186111];
    const synced = await syncFeedFolder(feed.dir, {
      deployment: 'production',
      skipPackets: [...skipped, missing],
      stores,
    });
    try {
      expect(synced.report.problems).toEqual([]);
      expect(synced.report.completed).toHaveLength(24);
      for (const packet of [...skipped, missing]) {
        expect(synced.requests.filter((path) => path.includes(`replication-${packet}`))).toEqual([]);
      }
      expect(synced.requests.filter((path) => PACKET_FILE.test(path))).toHaveLength(2 * 21);
      const stored = await synced.db.rows<{ packet: number }>('SELECT packet FROM replication_packets');
      expect(stored.map((row) => row.packet)).not.toContain(186110);
      expect(stored).toHaveLength(21);
    } finally {
      await synced.cleanup();
    }
  });

  it('--no-replication-packets: the CLI fetches none', async () => {
    const served = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    const data = await tempDir('lf-cli-');
    let db: TestDatabase | undefined;
    try {
      db = await stores.create(data.dir);
      const cli = startSync(served.feedRoot, data.dir, ['--once', '--db', db.db]);
      expect((await cli.exited).code, cli.stderr.join('\n')).toBe(0);
      const paths = served.requests.map((request) => request.path);
      expect(paths.filter((path) => path.includes('/json-dumps/')).length).toBeGreaterThan(0);
      // Before a later dump settles a 404, it asks once whether upstream still holds the hour
      // (sync/hourHeld.ts); it never reads a replication packet's signature nor stores one.
      const asked = paths.filter((path) => PACKET_FILE.test(path));
      expect(asked.filter((path) => path.endsWith('.asc'))).toEqual([]);
      expect(new Set(asked).size).toBe(asked.length);
      const settled = await db.rows<{ packet: number }>(
        "SELECT DISTINCT packet FROM dumps WHERE settled_by = 'LATER_DUMP' ORDER BY packet",
      );
      const askedPackets = asked.map((path) => Number(/replication-(\d+)/.exec(path)![1]));
      expect(settled.length).toBeGreaterThan(0);
      expect(askedPackets).toEqual(expect.arrayContaining(settled.map((row) => row.packet)));
      expect(await db.rows('SELECT count(*) AS n FROM replication_packets')).toEqual([{ n: 0 }]);
      // Only the newest packet waits: its missing JSON dumps settle once a later packet's dumps appear.
      expect(await db.rows('SELECT number FROM packets WHERE synced_at IS NULL')).toEqual([
        { number: manifest.lastPacket },
      ]);
    } finally {
      await db?.close();
      await served.close();
      await data.cleanup();
    }
  }, 60_000);
});

describeStores("the replication packet's TIMESTAMP settles missing JSON dumps", (stores) => {
  const clock = new Date('2026-05-12T12:00:00Z');
  const packet = 40;
  let feed: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    feed = await tempDir('lf-feed-');
    // An hour without JSON dumps, three hours old; its replication packet only merges away an MBID
    // no JSON dump ever held.
    await writeReplicationPacket(feed.dir, {
      packet,
      format: 'v2',
      timestamp: '2026-05-12 09:00:00.5+00',
      rows: [
        {
          xid: 77,
          table: 'musicbrainz.artist_gid_redirect',
          op: 'i',
          newData: gidRedirectRow('0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', 424242),
        },
      ],
    });
  });
  afterAll(() => feed?.cleanup());

  it('every dump of the packet is NO_CHANGES at once and the packet completes', async () => {
    const synced = await syncFeedFolder(
      feed.dir,
      { deployment: 'production', verify: false, now: () => clock, entities: ['artist', 'label'], stores },
      packet,
    );
    try {
      expect(synced.report.completed).toEqual([packet]);
      expect(await synced.db.rows('SELECT timestamp FROM packets WHERE number = ?', packet)).toEqual([
        { timestamp: '2026-05-12T09:00:00.500000Z' },
      ]);
      expect(await synced.db.rows('SELECT entity, status FROM dumps ORDER BY entity')).toEqual([
        { entity: 'artist', status: 'NO_CHANGES' },
        { entity: 'label', status: 'NO_CHANGES' },
      ]);
    } finally {
      await synced.cleanup();
    }
  });

  it('without replication packets the same hour has no evidence and stays PENDING', async () => {
    const synced = await syncFeedFolder(
      feed.dir,
      {
        deployment: 'production',
        verify: false,
        now: () => clock,
        entities: ['artist', 'label'],
        replicationPackets: false,
        stores,
      },
      packet,
    );
    try {
      expect(synced.report.completed).toEqual([]);
      expect(await synced.db.rows('SELECT DISTINCT status FROM dumps')).toEqual([{ status: 'PENDING' }]);
    } finally {
      await synced.cleanup();
    }
  });
});

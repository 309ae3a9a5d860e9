import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncReport } from '../../src/sync/context.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { createTestKeyHome, signFile, TEST_PUBLIC_KEY_FILE } from './archives.js';
import { type syncContext, syncContextOn, tempDir, testLogger } from './harness.js';
import type { FixtureManifest, ManifestReplicationPacket, ManifestRowChange } from './manifest.js';
import { type FixtureRow, writeReplicationPacket } from './replicationArchives.js';
import { SQLITE_STORES, type StoreKind, type TestDatabase } from './stores.js';

/**
 * Feed folders built at test time from the bundled demo feed (fixtures/feed): the same JSON dumps
 * with the replication packets rebuilt in another format or deployment naming.
 */

/** The builder rows of a manifest replication packet (seqids kept) and the key columns per table. */
export function fixtureRowsOf(replication: ManifestReplicationPacket): {
  rows: FixtureRow[];
  keys: Record<string, string[]>;
} {
  const keys: Record<string, string[]> = {};
  const rows = replication.rows.map((row: ManifestRowChange): FixtureRow => {
    keys[row.table] = Object.keys(row.keys);
    return {
      seqid: row.seqid,
      xid: row.xid,
      table: row.table,
      op: row.op,
      oldData: row.oldData,
      newData: row.newData,
    };
  });
  return { rows, keys };
}

/** ISO 8601 UTC (`2026-05-11T17:19:26.120034Z`) as PostgreSQL timestamptz text. */
function pgText(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '+00');
}

/** Options of {@link writeDeploymentFeed}. */
export interface DeploymentFeedOptions {
  /** v1 (`dbmirror_pending*`) or v2 (`pending_*`) members. */
  format: 'v1' | 'v2';
  /** File naming: production `replication-N-v2.tar.bz2`, test `replication-N.tar.bz2`. */
  deployment: 'production' | 'test';
  /** Packets that get a replication packet; default every packet of the manifest that has one. */
  packets?: readonly number[];
  /** Sign each replication packet with the committed test key (default true). */
  sign?: boolean;
}

/**
 * Writes a feed folder at `root`: the bundled JSON dumps (with their signatures) and, for each
 * chosen packet, its replication packet rebuilt from the manifest rows in `format` with
 * `deployment` naming (same seqids, xids, rows and TIMESTAMP), signed with the test key.
 */
export async function writeDeploymentFeed(
  root: string,
  manifest: FixtureManifest,
  options: DeploymentFeedOptions,
): Promise<void> {
  await cp(join(BUNDLED_FEED_ROOT, 'json-dumps'), join(root, 'json-dumps'), { recursive: true });
  const chosen = new Set(options.packets ?? manifest.packets.map((packet) => packet.number));
  const keyHome = options.sign === false ? undefined : await createTestKeyHome();
  try {
    for (const packet of manifest.packets) {
      if (!packet.replication || !chosen.has(packet.number)) continue;
      const { rows, keys } = fixtureRowsOf(packet.replication);
      const xidTimestamps = Object.fromEntries(
        packet.replication.rows.map((row) => [row.xid, pgText(row.timestamp)]),
      );
      const path = await writeReplicationPacket(root, {
        packet: packet.number,
        format: options.format,
        deployment: options.deployment,
        rows,
        keys,
        timestamp: packet.replication.timestamp,
        xidTimestamps,
      });
      if (keyHome) await signFile(path, keyHome, { fingerprint: keyHome.fingerprint });
    }
  } finally {
    await keyHome?.close();
  }
}

/** Options of {@link syncFeedFolder}. */
export interface SyncFeedOptions {
  deployment: 'production' | 'test';
  /** Default true. */
  replicationPackets?: boolean;
  skipPackets?: readonly number[];
  /** Verify signatures with the committed test key in `fail` mode (default true). */
  verify?: boolean;
  now?: () => Date;
  /** Only these entity types (default all). */
  entities?: Parameters<typeof syncContext>[0]['entities'];
  /** Sync passes to run (default 1); `report` is the last one's. */
  passes?: number;
  /** Last packet of each pass (default the latest). */
  to?: number;
  /** The store to sync into (test/support/stores.ts; default a SQLite file in the data folder). */
  stores?: StoreKind;
}

/** A database synced from a feed folder, with the paths the feed was asked for. */
export interface SyncedFeed {
  dataDir: string;
  /** The SQLite file (`livefeed.db` of the data folder; absent on PostgreSQL). */
  dbPath: string;
  /** The database synced into, open until {@link SyncedFeed.cleanup}. */
  db: TestDatabase;
  report: SyncReport;
  /** Request paths in order, e.g. `/api/musicbrainz/replication-186100-v2.tar.bz2`. */
  requests: string[];
  /** The same, per pass. */
  passRequests: string[][];
  /** Closes the database and removes the data folder. */
  cleanup(): Promise<void>;
}

/**
 * Serves the feed folder `root` with the sample feed on port 0 and syncs it (`passes` times, from
 * packet `from` when given, else the default window) into a new database of `options.stores` with
 * a new temporary data folder.
 */
export async function syncFeedFolder(
  root: string,
  options: SyncFeedOptions,
  from?: number,
): Promise<SyncedFeed> {
  const feed = await startSampleFeed({ root });
  const data = await tempDir('lf-repl-');
  const db = await (options.stores ?? SQLITE_STORES).create(data.dir);
  const cleanup = async () => {
    await db.close();
    await data.cleanup();
  };
  const logger = testLogger();
  const ctx = await syncContextOn(db.store, {
    feedRoot: feed.feedRoot,
    dataDir: data.dir,
    deployment: options.deployment,
    replicationPackets: options.replicationPackets ?? true,
    verifier:
      options.verify === false ? undefined : await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    logger,
    now: options.now,
    entities: options.entities,
  });
  try {
    const passRequests: string[][] = [];
    let report: SyncReport | undefined;
    for (let pass = 0; pass < (options.passes ?? 1); pass++) {
      const before = feed.requests.length;
      report = await syncOnce(
        { ...ctx, policy: { ...ctx.policy, skipPackets: new Set(options.skipPackets ?? []) } },
        { from, to: options.to },
      );
      passRequests.push(feed.requests.slice(before).map((request) => request.path));
    }
    return {
      dataDir: data.dir,
      dbPath: join(data.dir, 'livefeed.db'),
      db,
      report: report!,
      requests: passRequests.flat(),
      passRequests,
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  } finally {
    await ctx.feed.client.close();
    await feed.close();
  }
}

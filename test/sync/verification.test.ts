import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ArchiveError } from '../../src/feed/errors.js';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../src/samplefeed/server.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_KEY_FINGERPRINT, TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { artistRow, writeReplicationPacket } from '../support/replicationArchives.js';
import { describeStores } from '../support/stores.js';
import { BOMB_LIMIT, FAULT_PACKET } from '../support/tamperedFeed.js';

/**
 * Signature verification in a sync, on both stores (issue 17): the bundled feed verified with the
 * test key, and the decompression limit on a replication packet. Integrity faults in each
 * `--verify` mode: verificationModes.test.ts.
 */

const manifest = readBundledManifest();

/** Files (not folders) left under `<dataDir>/tmp`. */
async function tmpFiles(dataDir: string): Promise<string[]> {
  const entries = await readdir(join(dataDir, 'tmp'), { recursive: true, withFileTypes: true }).catch(
    () => [],
  );
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

describeStores('verification in a sync', (stores) => {
  it('marks every file VERIFIED with the key fingerprint and keeps archive and .asc byte for byte', async () => {
    const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    const data = await tempDir();
    const lines: string[] = [];
    const logger = testLogger(lines);
    const db = await stores.create(data.dir);
    const ctx = await syncContextOn(db.store, {
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      logger,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    });
    try {
      const report = await syncOnce(ctx);
      expect(report.problems).toEqual([]);
      const dumps = manifest.packets.flatMap((p) => Object.values(p.jsonDumps));
      const rows = await db.rows('SELECT name, signature, fingerprint FROM feed_files');
      expect(rows).toHaveLength(dumps.length);
      for (const row of rows)
        expect(row).toMatchObject({ signature: 'VERIFIED', fingerprint: TEST_KEY_FINGERPRINT });
      for (const file of dumps) {
        const kept = join(data.dir, 'files', file.file);
        expect(readFileSync(kept)).toEqual(readFileSync(join(BUNDLED_FEED_ROOT, file.file)));
        expect(readFileSync(`${kept}.asc`)).toEqual(readFileSync(join(BUNDLED_FEED_ROOT, file.signature)));
      }
      const events = lines.map((l) => JSON.parse(l) as { event?: string; keys?: unknown });
      expect(events.filter((e) => e.event === 'signing-keys')).toHaveLength(1);
      // The test key is not upstream's documented key (FEED.md, Signatures): the operator is warned.
      expect(events.filter((e) => e.event === 'foreign-signing-key')).toHaveLength(1);
      expect(await tmpFiles(data.dir)).toEqual([]);
    } finally {
      await ctx.feed.client.close();
      await db.close();
      await feed.close();
      await data.cleanup();
    }
  });

  it('the decompression size limit also guards replication packets (bzip2): stops a packet that decompresses past maxBytes and stores nothing; the default admits it', async () => {
    const dir = await tempDir();
    const db = await stores.create(dir.dir);
    const replication = db.store.replication;
    try {
      const rows = Array.from({ length: 400 }, (_, i) => ({
        xid: 7,
        table: 'musicbrainz.artist',
        op: 'i' as const,
        newData: artistRow({
          id: i + 1,
          gid: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
          name: 'x'.repeat(200),
        }),
      }));
      const path = await writeReplicationPacket(join(dir.dir, 'feed'), {
        packet: FAULT_PACKET,
        format: 'v2',
        rows,
      });
      const error = await replication
        .storeReplicationPacket(FAULT_PACKET, path, { maxBytes: BOMB_LIMIT })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArchiveError);
      expect((error as Error).message).toMatch(
        new RegExp(`replication packet 500.*decompresses to more than ${BOMB_LIMIT} bytes`),
      );
      expect(await db.rows('SELECT count(*) AS n FROM row_changes')).toEqual([{ n: 0 }]);
      expect(
        await db.rows('SELECT count(*) AS n FROM replication_packets WHERE status = ?', 'SYNCED'),
      ).toEqual([{ n: 0 }]);
      expect(db.idle()).toBe(true);
      expect((await replication.storeReplicationPacket(FAULT_PACKET, path, {})).rowCount).toBe(rows.length);
      expect(await db.rows('SELECT count(*) AS n FROM row_changes')).toEqual([{ n: rows.length }]);
    } finally {
      await db.close();
      await dir.cleanup();
    }
  });
});

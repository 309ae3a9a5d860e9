import { existsSync, readFileSync } from 'node:fs';
import { cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import { ArchiveError } from '../../src/feed/errors.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import type { VerifyMode } from '../../src/feed/signature.js';
import { BUNDLED_FEED_ROOT, startSampleFeed } from '../../src/samplefeed/server.js';
import type { SyncReport } from '../../src/sync/context.js';
import { storeReplicationPacket } from '../../src/sync/replication.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import {
  createTestKeyHome,
  TEST_KEY_FINGERPRINT,
  TEST_PUBLIC_KEY_FILE,
  type TestKeyHome,
} from '../support/archives.js';
import { createGpgHome, type GpgHome } from '../support/gpg.js';
import { syncContext, tempDir, testLogger } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { artistRow, writeReplicationPacket } from '../support/replicationArchives.js';
import {
  BOMB_LIMIT,
  FAULT_ENTITIES,
  FAULT_PACKET,
  FAULTS,
  fixFaultyPacket,
  writeFaultyPacket,
} from '../support/tamperedFeed.js';

const manifest = readBundledManifest();
type Ctx = Awaited<ReturnType<typeof syncContext>>;

interface FileRow {
  name: string;
  signature: string;
  fingerprint: string | null;
  storedPath: string | null;
  signatureStoredPath: string | null;
}

function fileRow(ctx: Ctx, name: string): FileRow | undefined {
  return ctx.store.sqlite
    .prepare(
      `SELECT name, signature, fingerprint, stored_path AS storedPath, signature_stored_path AS signatureStoredPath
       FROM feed_files WHERE name = ?`,
    )
    .get(name) as FileRow | undefined;
}

function dump(ctx: Ctx, entity: EntityType): { status: string; error: string | null; n: number } {
  return ctx.store.sqlite
    .prepare('SELECT status, error, change_count AS n FROM dumps WHERE packet = ? AND entity = ?')
    .get(FAULT_PACKET, entity) as { status: string; error: string | null; n: number };
}

/** Files (not folders) left under `<dataDir>/tmp`. */
async function tmpFiles(dataDir: string): Promise<string[]> {
  const entries = await readdir(join(dataDir, 'tmp'), { recursive: true, withFileTypes: true }).catch(
    () => [],
  );
  return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
}

describe('a sync of the bundled feed with the test key', () => {
  it('marks every file VERIFIED with the key fingerprint and keeps archive and .asc byte for byte', async () => {
    const feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    const data = await tempDir();
    const lines: string[] = [];
    const logger = testLogger(lines);
    const ctx = await syncContext({
      feedRoot: feed.feedRoot,
      dataDir: data.dir,
      logger,
      verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
    });
    try {
      const report = await syncOnce(ctx);
      expect(report.problems).toEqual([]);
      const dumps = manifest.packets.flatMap((p) => Object.values(p.jsonDumps));
      const rows = ctx.store.sqlite.prepare('SELECT name, signature, fingerprint FROM feed_files').all();
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
      ctx.store.close();
      await ctx.feed.client.close();
      await feed.close();
      await data.cleanup();
    }
  });
});

describe('integrity faults in each verify mode (one packet, one fault per entity type)', () => {
  let keyHome: TestKeyHome;
  let foreign: { home: GpgHome; fingerprint: string };
  let template: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    keyHome = await createTestKeyHome();
    const home = await createGpgHome();
    foreign = { home, fingerprint: await home.generateKey('someone else <someone@livefeed.invalid>') };
    template = await tempDir('faulty-feed-');
    await writeFaultyPacket(template.dir, keyHome, foreign);
  });
  afterAll(async () => {
    await keyHome.close();
    await foreign.home.close();
    await template.cleanup();
  });

  const signatureFaults = [FAULTS.tampered, FAULTS.foreignKey, FAULTS.noSignature] as const;
  const contentFaults = [
    [FAULTS.wrongSequence, /REPLICATION_SEQUENCE is 499, expected 500/],
    [FAULTS.unsafeMember, /unsafe member path "\.\.\/\.\.\/escape"/],
    [FAULTS.bomb, new RegExp(`decompresses to more than ${BOMB_LIMIT} bytes`)],
  ] as const;

  describe.each(['fail', 'warn', 'off'] as VerifyMode[])('--verify %s', (mode) => {
    let root: Awaited<ReturnType<typeof tempDir>>;
    let data: Awaited<ReturnType<typeof tempDir>>;
    let feed: Awaited<ReturnType<typeof startSampleFeed>>;
    let ctx: Ctx;
    let report: SyncReport;
    const lines: string[] = [];

    beforeAll(async () => {
      root = await tempDir('feed-');
      await cp(template.dir, root.dir, { recursive: true });
      data = await tempDir();
      feed = await startSampleFeed({ root: root.dir });
      const logger = testLogger(lines);
      ctx = await syncContext({
        feedRoot: feed.feedRoot,
        dataDir: data.dir,
        entities: FAULT_ENTITIES,
        logger,
        verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, mode, logger),
      });
      ctx.feed.maxDumpBytes = BOMB_LIMIT;
      report = await syncOnce(ctx, { from: FAULT_PACKET });
    });
    afterAll(async () => {
      ctx.store.close();
      await ctx.feed.client.close();
      await feed.close();
      await root.cleanup();
      await data.cleanup();
    });

    it('stores the good dump, marked by mode', () => {
      expect(dump(ctx, FAULTS.good)).toMatchObject({ status: 'SYNCED', n: 2 });
      expect(fileRow(ctx, jsonDumpPath(FAULT_PACKET, FAULTS.good))).toMatchObject(
        mode === 'off'
          ? { signature: 'UNVERIFIED', fingerprint: null }
          : { signature: 'VERIFIED', fingerprint: TEST_KEY_FINGERPRINT },
      );
    });

    it.each(contentFaults)(
      'content check: %s is never stored, FAILED with the reason, and reported',
      (entity, reason) => {
        const name = jsonDumpPath(FAULT_PACKET, entity);
        expect(dump(ctx, entity)).toMatchObject({ status: 'FAILED', n: 0 });
        expect(dump(ctx, entity).error).toMatch(reason);
        expect(fileRow(ctx, name)).toBeUndefined();
        expect(existsSync(join(data.dir, 'files', name))).toBe(false);
        expect(report.problems).toContainEqual({
          packet: FAULT_PACKET,
          file: name,
          reason: expect.stringMatching(reason),
        });
        const changes = ctx.store.sqlite
          .prepare('SELECT count(*) AS n FROM changes WHERE entity = ?')
          .get(entity);
        expect(changes).toEqual({ n: 0 });
      },
    );

    it.each(signatureFaults)('signature fault: %s', (entity) => {
      const name = jsonDumpPath(FAULT_PACKET, entity);
      const expected = entity === FAULTS.noSignature ? 'MISSING' : 'INVALID';
      if (mode === 'fail') {
        expect(dump(ctx, entity).status).toBe('FAILED');
        expect(dump(ctx, entity).error).toMatch(new RegExp(`signature of ${name} is ${expected}`));
        expect(fileRow(ctx, name)).toBeUndefined();
        expect(existsSync(join(data.dir, 'files', name))).toBe(false);
        const problem = report.problems.find((p) => p.file === name);
        expect(`packet ${problem?.packet}: ${problem?.file}: ${problem?.reason}`).toMatch(
          new RegExp(`^packet 500: ${name}: signature of ${name} is ${expected}`),
        );
        return;
      }
      expect(dump(ctx, entity)).toMatchObject({ status: 'SYNCED', error: null });
      expect(report.problems.find((p) => p.file === name)).toBeUndefined();
      const row = fileRow(ctx, name)!;
      expect(row).toMatchObject({ signature: mode === 'warn' ? expected : 'UNVERIFIED', fingerprint: null });
      expect(readFileSync(join(data.dir, row.storedPath!))).toEqual(readFileSync(join(root.dir, name)));
      expect(row.signatureStoredPath === null).toBe(entity === FAULTS.noSignature);
      if (mode === 'warn') {
        const warnings = lines
          .map((l) => JSON.parse(l))
          .filter((e) => e.event === 'signature-warning' && e.file === name);
        expect(warnings).toHaveLength(1);
      }
    });

    it('leaves no downloads behind', async () => {
      expect(await tmpFiles(data.dir)).toEqual([]);
    });

    it('says once that nothing is verified when verification is off', () => {
      const off = lines.map((l) => JSON.parse(l)).filter((e) => e.event === 'verification-off');
      expect(off).toHaveLength(mode === 'off' ? 1 : 0);
    });

    it('a later run stores the fixed files', async () => {
      await fixFaultyPacket(root.dir, keyHome);
      const again = await syncOnce(ctx);
      expect(again.problems).toEqual([]);
      expect(again.completed).toEqual([FAULT_PACKET]);
      for (const entity of FAULT_ENTITIES) {
        expect(dump(ctx, entity).status, entity).toBe('SYNCED');
        const row = fileRow(ctx, jsonDumpPath(FAULT_PACKET, entity))!;
        // warn/off stored the signature faults in the first run; a SYNCED dump is not fetched again.
        const storedEarlier = mode !== 'fail' && (signatureFaults as readonly string[]).includes(entity);
        if (mode === 'off') expect(row.signature).toBe('UNVERIFIED');
        else if (!storedEarlier)
          expect(row).toMatchObject({ signature: 'VERIFIED', fingerprint: TEST_KEY_FINGERPRINT });
      }
    });
  });
});

describe('the decompression size limit also guards replication packets (bzip2)', () => {
  it('stops a packet that decompresses past maxBytes and stores nothing; the default admits it', async () => {
    const dir = await tempDir();
    const store = openStore(join(dir.dir, 'livefeed.db'));
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
      const error = await storeReplicationPacket(store, FAULT_PACKET, path, { maxBytes: BOMB_LIMIT }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ArchiveError);
      expect((error as Error).message).toMatch(
        new RegExp(`replication packet 500.*decompresses to more than ${BOMB_LIMIT} bytes`),
      );
      expect(store.sqlite.prepare('SELECT count(*) AS n FROM row_changes').get()).toEqual({ n: 0 });
      expect((await storeReplicationPacket(store, FAULT_PACKET, path)).rowCount).toBe(rows.length);
    } finally {
      store.close();
      await dir.cleanup();
    }
  });
});

import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityType } from '../src/feed/entities.js';
import { fullDumpArchivePath } from '../src/feed/fullDumps.js';
import { FULL_DUMPS_FOLDER } from '../src/samplefeed/fullDumps.js';
import { pgTimestampSeconds, signFile, type TestKeyHome, writeJsonDump } from '../test/support/archives.js';
import type { ManifestFullDump } from '../test/support/manifest.js';
import { FIRST_PACKET, packetTimestamp } from './fixturePlan.js';

/** Name of the demo feed's one full JSON dump directory. */
export const FULL_DUMP_NAME = '20260510-001';
/** Its REPLICATION_SEQUENCE: the packet before the feed's first, so `sync` continues at the first. */
export const FULL_DUMP_PACKET = FIRST_PACKET - 1;

/**
 * Writes the demo feed's full JSON dump (FEED.md, Full JSON dumps) into
 * `<outDir>/full-json-dumps/`: `LATEST` naming {@link FULL_DUMP_NAME}, and per entity type of
 * `lines` an `<entity>.tar.xz` of those lines (REPLICATION_SEQUENCE {@link FULL_DUMP_PACKET}) with
 * its `.asc` by the test key. Removes an earlier copy first. Reproducible like the rest of the feed.
 * @throws the errors of the archive builder and gpg.
 */
export async function writeFullDumpFixtures(
  outDir: string,
  keyHome: TestKeyHome,
  lines: ReadonlyMap<EntityType, string[]>,
): Promise<ManifestFullDump> {
  const folder = join(outDir, FULL_DUMPS_FOLDER);
  await rm(folder, { recursive: true, force: true });
  await mkdir(join(folder, FULL_DUMP_NAME), { recursive: true });
  const timestamp = packetTimestamp(FULL_DUMP_PACKET);
  const scratch = await mkdtemp(join(tmpdir(), 'lf-full-dump-'));
  const manifest: ManifestFullDump = { name: FULL_DUMP_NAME, packet: FULL_DUMP_PACKET, entities: {} };
  try {
    for (const [entity, entityLines] of lines) {
      const built = await writeJsonDump(scratch, {
        packet: FULL_DUMP_PACKET,
        entity,
        lines: entityLines,
        timestamp,
      });
      const file = fullDumpArchivePath(FULL_DUMP_NAME, entity);
      await rename(built.path, join(folder, file));
      // Full dumps are signed some hours after their REPLICATION_SEQUENCE's hour.
      await signFile(join(folder, file), keyHome, {
        time: pgTimestampSeconds(timestamp)! + 3 * 3600,
        fingerprint: keyHome.fingerprint,
      });
      manifest.entities[entity] = {
        file,
        mbids: entityLines.map((text) => (JSON.parse(text) as { id: string }).id),
      };
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  await writeFile(join(folder, 'LATEST'), `${FULL_DUMP_NAME}\n`);
  return manifest;
}

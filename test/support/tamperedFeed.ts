import { createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import lzma from 'lzma-native';
import tar from 'tar-stream';
import type { EntityType } from '../../src/feed/entities.js';
import { jsonDumpPath } from '../../src/feed/protocol/urls.js';
import {
  DEFAULT_SCHEMA_SEQUENCE,
  DEFAULT_TIMESTAMP,
  signFile,
  type TestKeyHome,
  writeJsonDump,
} from './archives.js';
import type { GpgHome } from './gpg.js';

/**
 * A feed with one packet whose JSON dumps each break integrity in one way (issue 4, Tests), built
 * with real tar, xz and gpg: which entity type carries which fault.
 */
export const FAULTS = {
  /** Well-formed, signed by the test key. */
  good: 'area',
  /** Signed by the test key, then replaced by other (well-formed) bytes: the signature no longer matches. */
  tampered: 'artist',
  /** Well-formed, signed by another key. */
  foreignKey: 'label',
  /** Well-formed, no `.asc` on the feed. */
  noSignature: 'place',
  /** `REPLICATION_SEQUENCE` names another packet; correctly signed. */
  wrongSequence: 'work',
  /** Holds a `../` member; correctly signed. */
  unsafeMember: 'event',
  /** Decompresses to more than {@link BOMB_LIMIT} bytes; correctly signed. */
  bomb: 'recording',
} as const satisfies Record<string, EntityType>;

/** The entity types of {@link FAULTS}, the ones a test syncs. */
export const FAULT_ENTITIES: EntityType[] = Object.values(FAULTS);

/** Packet that holds the faulty dumps. */
export const FAULT_PACKET = 500;

/** `maxDumpBytes` under which the bomb dump fails and every other dump passes. */
export const BOMB_LIMIT = 64 * 1024;

/** Signature time of built files (after the test key's creation, 2026-01-01). */
const SIGN_TIME = Date.parse('2026-05-11T22:00:00Z') / 1000;

/** A JSON dump line: a JSON object with an MBID `id` (FEED.md, JSON dump archives). */
export function line(entity: EntityType, n: number, name = `${entity} ${n}`): string {
  return JSON.stringify({ id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, name });
}

function goodLines(entity: EntityType): string[] {
  return [line(entity, 1), line(entity, 2)];
}

/** Writes the well-formed, test-key-signed dump of `entity` for {@link FAULT_PACKET}; returns its path. */
export async function writeGoodDump(root: string, entity: EntityType, keyHome: TestKeyHome): Promise<string> {
  const built = await writeJsonDump(root, { packet: FAULT_PACKET, entity, lines: goodLines(entity) });
  await signFile(built.path, keyHome, { time: SIGN_TIME });
  return built.path;
}

/**
 * Writes every dump of {@link FAULTS} for {@link FAULT_PACKET} under `root`. `foreign` is another
 * GnuPG home with its key's fingerprint.
 */
export async function writeFaultyPacket(
  root: string,
  keyHome: TestKeyHome,
  foreign: { home: GpgHome; fingerprint: string },
): Promise<void> {
  const packet = FAULT_PACKET;
  await writeGoodDump(root, FAULTS.good, keyHome);

  // Rewriting the archive after signing leaves the old .asc beside other bytes.
  await writeGoodDump(root, FAULTS.tampered, keyHome);
  await writeJsonDump(root, {
    packet,
    entity: FAULTS.tampered,
    lines: [line(FAULTS.tampered, 1, 'Tampered')],
  });

  const foreignDump = await writeJsonDump(root, {
    packet,
    entity: FAULTS.foreignKey,
    lines: goodLines(FAULTS.foreignKey),
  });
  await writeFile(
    `${foreignDump.path}.asc`,
    await foreign.home.detachSign(foreign.fingerprint, foreignDump.path),
  );
  await rm(`${foreignDump.path}.${foreign.fingerprint.slice(-8)}.asc`, { force: true });

  await writeJsonDump(root, { packet, entity: FAULTS.noSignature, lines: goodLines(FAULTS.noSignature) });

  const wrong = await writeJsonDump(root, {
    packet,
    entity: FAULTS.wrongSequence,
    lines: goodLines(FAULTS.wrongSequence),
    replicationSequence: packet - 1,
  });
  await signFile(wrong.path, keyHome, { time: SIGN_TIME });

  const unsafe = await writeUnsafeDump(root, packet, FAULTS.unsafeMember);
  await signFile(unsafe, keyHome, { time: SIGN_TIME });

  // ~200 kB of one repeated line compresses to a few kB: a small archive far above BOMB_LIMIT.
  const bombLines = Array.from({ length: 2000 }, (_, i) => line(FAULTS.bomb, i + 1, 'x'.repeat(60)));
  const bomb = await writeJsonDump(root, { packet, entity: FAULTS.bomb, lines: bombLines });
  await signFile(bomb.path, keyHome, { time: SIGN_TIME });
}

/** Replaces every faulty dump of {@link FAULT_PACKET} by a well-formed one signed by the test key. */
export async function fixFaultyPacket(root: string, keyHome: TestKeyHome): Promise<void> {
  for (const entity of FAULT_ENTITIES) await writeGoodDump(root, entity, keyHome);
}

/**
 * Writes `json-dumps/json-dump-<packet>/<entity>.tar.xz` holding upstream's members plus
 * `../../escape` (which `writeTarArchive` refuses to build, so this uses tar-stream and xz through
 * lzma-native). Returns its path.
 */
export async function writeUnsafeDump(root: string, packet: number, entity: EntityType): Promise<string> {
  const path = join(root, ...jsonDumpPath(packet, entity).split('/'));
  await mkdir(dirname(path), { recursive: true });
  const pack = tar.pack();
  const members: [string, string][] = [
    ['TIMESTAMP', `${DEFAULT_TIMESTAMP}\n`],
    ['../../escape', 'written outside the extraction folder by a naive extractor\n'],
    ['REPLICATION_SEQUENCE', `${packet}\n`],
    ['SCHEMA_SEQUENCE', `${DEFAULT_SCHEMA_SEQUENCE}\n`],
    ['JSON_DUMPS_SCHEMA_NUMBER', '1\n'],
    [`mbdump/${entity}`, `${goodLines(entity).join('\n')}\n`],
  ];
  for (const [name, content] of members) pack.entry({ name, mtime: new Date(0) }, content);
  pack.finalize();
  await pipeline(pack, lzma.createCompressor(), createWriteStream(path));
  return path;
}

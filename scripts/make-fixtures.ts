/**
 * Builds fixtures/feed, the bundled demo feed (production naming), from fixtures/samples/*.jsonl and
 * the committed test signing key: `npm run fixtures` (= `tsx scripts/make-fixtures.ts [outDir]`).
 * Output is reproducible: fixed tar owners and mtimes, single-threaded xz, signatures with a fixed
 * creation time (EdDSA signatures are deterministic). What goes where: scripts/fixturePlan.ts (JSON
 * dumps) and scripts/replicationPlan.ts (replication packets).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ENTITY_TYPES, type EntityType, isEntityType } from '../src/feed/entities.js';
import {
  createTestKeyHome,
  DEFAULT_SCHEMA_SEQUENCE,
  pgTimestampSeconds,
  signFile,
  TEST_KEY_FINGERPRINT,
  writeJsonDump,
} from '../test/support/archives.js';
import type {
  FixtureManifest,
  ManifestFullDump,
  ManifestJsonDump,
  ManifestPacket,
} from '../test/support/manifest.js';
import {
  FIRST_PACKET,
  FIXTURE_PLAN,
  PACKET_COUNT,
  type PlannedLine,
  packetTimestamp,
} from './fixturePlan.js';
import { writeFullDumpFixtures } from './fullDumpFixtures.js';
import { removeReplicationFixtures, writeReplicationFixtures } from './replicationFixtures.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** JSON dumps appear about 30 minutes after their packet (FEED.md, Errors); their signatures too. */
const SIGNED_AFTER_SECONDS = 30 * 60;

type Samples = Map<EntityType, string[]>;

/** Options of {@link makeFixtures}. */
export interface MakeFixturesOptions {
  /** Feed folder to (re)build. Default fixtures/feed. */
  outDir?: string;
  /** Folder of `<entity>.jsonl` sample files. Default fixtures/samples. */
  samplesDir?: string;
}

/**
 * Rebuilds the demo feed in `outDir`: removes its `json-dumps/`, replication packets and
 * `MANIFEST.json`, writes and signs every JSON dump of the plan and every packet's replication
 * packet, then writes `MANIFEST.json`. Resolves to the manifest.
 * @throws Error for a sample file of an unknown entity type, a sample line that is not JSON with an
 *   `id`, a plan entry naming a missing line, a sample line the plan never uses, and builder errors.
 */
export async function makeFixtures(options: MakeFixturesOptions = {}): Promise<FixtureManifest> {
  const outDir = resolve(options.outDir ?? join(REPO, 'fixtures/feed'));
  const samples = await readSamples(resolve(options.samplesDir ?? join(REPO, 'fixtures/samples')));
  checkPlan(samples);

  await rm(join(outDir, 'json-dumps'), { recursive: true, force: true });
  await rm(join(outDir, 'MANIFEST.json'), { force: true });
  await removeReplicationFixtures(outDir);

  const keyHome = await createTestKeyHome();
  const packets: ManifestPacket[] = [];
  const dumpLines = new Map<string, Record<string, unknown>[]>();
  let fullDump: ManifestFullDump | undefined;
  try {
    for (let packet = FIRST_PACKET; packet < FIRST_PACKET + PACKET_COUNT; packet++) {
      const timestamp = packetTimestamp(packet);
      const signedAt = pgTimestampSeconds(timestamp)! + SIGNED_AFTER_SECONDS;
      const jsonDumps: ManifestPacket['jsonDumps'] = {};
      for (const entity of ENTITY_TYPES) {
        const planned = FIXTURE_PLAN[packet]?.[entity];
        if (!planned) continue;
        const lines = planned.map((entry) => renderLine(samples, entity, entry));
        dumpLines.set(
          `${packet}/${entity}`,
          lines.map((text) => JSON.parse(text) as Record<string, unknown>),
        );
        const built = await writeJsonDump(outDir, { packet, entity, lines, timestamp });
        await signFile(built.path, keyHome, { time: signedAt, fingerprint: keyHome.fingerprint });
        jsonDumps[entity] = describeDump(built.feedPath, await readFile(built.path), lines);
      }
      packets.push({ number: packet, timestamp, jsonDumps });
    }

    // ── Replication packets ─────────────────────────────────────────────────────────────────────
    // `replication-<N>-v2.tar.bz2` (+ `.asc`) per packet, planned from the JSON dump lines
    // (scripts/replicationPlan.ts), signed like the dumps.
    const replication = await writeReplicationFixtures(
      outDir,
      keyHome,
      (packet, entity) => dumpLines.get(`${packet}/${entity}`) ?? [],
    );
    for (const packet of packets) packet.replication = replication.get(packet.number);
    fullDump = await writeFullDumpFixtures(outDir, keyHome, fullDumpLines(samples));
  } finally {
    await keyHome.close();
  }

  const manifest: FixtureManifest = {
    description:
      'Bundled demo feed of livefeed, built by scripts/make-fixtures.ts from real CC0 MusicBrainz sample ' +
      'lines (fixtures/samples). Earlier versions of a few entities are edited copies of those lines. ' +
      'Signed with the TEST ONLY key fixtures/keys/test-signing-key.asc. Do not edit by hand.',
    database: 'musicbrainz',
    firstPacket: FIRST_PACKET,
    lastPacket: FIRST_PACKET + PACKET_COUNT - 1,
    schemaSequence: DEFAULT_SCHEMA_SEQUENCE,
    signingKeyFingerprint: TEST_KEY_FINGERPRINT,
    packets,
    fullDump,
  };
  await writeFile(join(outDir, 'MANIFEST.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

async function readSamples(dir: string): Promise<Samples> {
  const samples: Samples = new Map();
  for (const name of (await readdir(dir)).filter((file) => file.endsWith('.jsonl')).sort()) {
    const entity = basename(name, '.jsonl');
    if (!isEntityType(entity)) throw new Error(`${join(dir, name)}: ${entity} is not an entity type`);
    const lines = (await readFile(join(dir, name), 'utf8')).split('\n').filter((text) => text !== '');
    for (const [i, text] of lines.entries()) parseLine(text, `${name} line ${i + 1}`);
    samples.set(entity, lines);
  }
  return samples;
}

function parseLine(text: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${where}: not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || typeof (value as { id?: unknown }).id !== 'string') {
    throw new Error(`${where}: not a JSON object with a string "id"`);
  }
  return value as Record<string, unknown>;
}

/** Every plan entry must name an existing line and every sample line must be used (no silent skip). */
function checkPlan(samples: Samples): void {
  const used = new Set<string>();
  for (let packet = FIRST_PACKET; packet < FIRST_PACKET + PACKET_COUNT; packet++) {
    const plan = FIXTURE_PLAN[packet];
    if (!plan)
      throw new Error(`fixturePlan: packet ${packet} is missing (use {} for a packet without dumps)`);
    for (const [entity, entries] of Object.entries(plan) as [EntityType, PlannedLine[]][]) {
      for (const { index } of entries) {
        if (samples.get(entity)?.[index] === undefined) {
          throw new Error(
            `fixturePlan: packet ${packet} ${entity} names line ${index}, which ${entity}.jsonl lacks`,
          );
        }
        used.add(`${entity}:${index}`);
      }
    }
  }
  for (const [entity, lines] of samples) {
    lines.forEach((_, index) => {
      if (!used.has(`${entity}:${index}`))
        throw new Error(`fixturePlan: ${entity}.jsonl line ${index} is never used`);
    });
  }
}

/**
 * Lines of the demo full dump for every entity type: every sample line, in the version the feed
 * first shows (the full dump is consistent with the packet before the feed's first).
 */
function fullDumpLines(samples: Samples): Map<EntityType, string[]> {
  const result = new Map<EntityType, string[]>();
  // Upstream publishes every entity type; types without sample lines get an archive without lines.
  for (const entity of ENTITY_TYPES) {
    const lines = samples.get(entity) ?? [];
    const first = new Map<number, PlannedLine>();
    for (let packet = FIRST_PACKET; packet < FIRST_PACKET + PACKET_COUNT; packet++) {
      for (const entry of FIXTURE_PLAN[packet]?.[entity] ?? [])
        if (!first.has(entry.index)) first.set(entry.index, entry);
    }
    result.set(
      entity,
      lines.map((_, index) => renderLine(samples, entity, first.get(index) ?? { index })),
    );
  }
  return result;
}

/** The sample line verbatim, or re-serialized with `patch` applied (keys keep their order). */
function renderLine(samples: Samples, entity: EntityType, entry: PlannedLine): string {
  const text = samples.get(entity)![entry.index]!;
  if (!entry.patch) return text;
  return JSON.stringify({ ...parseLine(text, `${entity}.jsonl line ${entry.index + 1}`), ...entry.patch });
}

function describeDump(file: string, bytes: Buffer, lines: string[]): ManifestJsonDump {
  const parsed = lines.map((text) => JSON.parse(text) as { id: string; name?: string; title?: string });
  return {
    file,
    signature: `${file}.asc`,
    bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    mbids: parsed.map((value) => value.id),
    names: parsed.map((value) => value.name ?? value.title ?? ''),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const manifest = await makeFixtures(process.argv[2] ? { outDir: process.argv[2] } : {});
  const dumps = manifest.packets.reduce((sum, packet) => sum + Object.keys(packet.jsonDumps).length, 0);
  const replication = manifest.packets.flatMap((packet) => (packet.replication ? [packet.replication] : []));
  const bytes = manifest.packets
    .flatMap((packet) => [
      ...Object.values(packet.jsonDumps),
      ...(packet.replication ? [packet.replication] : []),
    ])
    .reduce((sum, file) => sum + file.bytes, 0);
  console.log(
    `fixtures: packets ${manifest.firstPacket}..${manifest.lastPacket}, ${dumps} signed JSON dumps, ` +
      `${replication.length} signed replication packets, ${bytes} bytes of archives`,
  );
}

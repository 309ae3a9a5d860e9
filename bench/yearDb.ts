/**
 * The year-sized database of `npm run bench` (issue 16): `packets` hourly packets holding `changes`
 * JSON dump lines in all, shaped from the real sample lines (/work/shared/samples, else
 * fixtures/samples) with fresh UUIDs, one artist changed in `versions` of the packets, and a
 * replication packet per packet deleting a few earlier entities. Everything is written through
 * livefeed's own storage code: each JSON dump and replication packet is a real archive (tar + xz
 * made in memory by bench/yearArchive.ts, tar + bzip2 by the test builder) stored by
 * `ingestJsonDump` / `storeReplicationPacket`, dumps without changes are
 * settled by `markPending` + `markNoChanges`, and packets complete through `completePackets` (which
 * keeps the latest-packet mark). A built database is kept in bench/out and reused while its recipe
 * (`<db>.json`) is the same.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, type Store } from '../src/db/client.js';
import { ENTITY_TYPES, type EntityType } from '../src/feed/entities.js';
import { markPending } from '../src/sync/fileRecords.js';
import { ingestJsonDump } from '../src/sync/ingest.js';
import { storeReplicationPacket } from '../src/sync/replication.js';
import { completePackets, markNoChanges } from '../src/sync/state.js';
import { type FixtureRow, writeReplicationPacket } from '../test/support/replicationArchives.js';
import { writeYearJsonDump } from './yearArchive.js';

/** Bumped whenever the recipe changes, so stale databases are built again. */
const RECIPE_VERSION = 1;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** The first packet; packets are hourly from {@link START}. */
export const FIRST_PACKET = 100_000;
const START = Date.parse('2025-11-22T00:00:00Z');
/** The artist with `versions` versions (its MBID is fixed, so both databases know it). */
export const VERSIONED_ARTIST = '5b11f4ce-a62d-471e-81fc-a69a8278c7da';
/** Share of a packet's changes per entity type (types without sample lines have none: NO_CHANGES). */
const WEIGHTS: Partial<Record<EntityType, number>> = {
  recording: 0.5,
  release: 0.2,
  artist: 0.12,
  work: 0.1,
  label: 0.06,
  area: 0.015,
  series: 0.005,
};
/** Entities a replication packet deletes (each becomes a removal). */
const DELETIONS_PER_PACKET = 6;
/** Packets built ahead of the one being stored (archives are made by tar/xz/bzip2 on the other core). */
const AHEAD = 3;

/** What to build. */
export interface YearRecipe {
  packets: number;
  changes: number;
  versions: number;
}

function samplesByEntity(): Map<EntityType, string[]> {
  const dir = existsSync('/work/shared/samples') ? '/work/shared/samples' : join(ROOT, 'fixtures/samples');
  const map = new Map<EntityType, string[]>();
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.jsonl'))) {
    const lines = readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '');
    map.set(name.replace('.jsonl', '') as EntityType, lines);
  }
  return map;
}

interface PacketPlan {
  packet: number;
  timestamp: string;
  dumps: { entity: EntityType; lines: string[] }[];
  deletions: FixtureRow[];
}

/** Plans packet `i`: its lines per entity type, and its deletions of MBIDs stored earlier. */
function planPacket(
  i: number,
  recipe: YearRecipe,
  samples: Map<EntityType, string[]>,
  earlier: string[],
): PacketPlan {
  const packet = FIRST_PACKET + i;
  const perPacket = recipe.changes / recipe.packets;
  const every = recipe.packets / Math.max(1, recipe.versions);
  const versioned = Math.floor(i / every) !== Math.floor((i + 1) / every) || (i === 0 && recipe.versions > 0);
  const dumps: PacketPlan['dumps'] = [];
  for (const [entity, weight] of Object.entries(WEIGHTS) as [EntityType, number][]) {
    const exact = perPacket * weight;
    // Whole lines per packet; the fraction comes out right over the packets.
    const count = Math.floor((i + 1) * exact) - Math.floor(i * exact);
    const pool = samples.get(entity);
    if (!pool || count === 0) continue;
    const lines = Array.from({ length: count }, (_, n) =>
      pool[(i * 31 + n) % pool.length]!.replace(UUID, () => randomUUID()),
    );
    if (entity === 'artist' && versioned)
      lines[0] = JSON.stringify({ ...JSON.parse(lines[0]!), id: VERSIONED_ARTIST, name: `Version ${i}` });
    // Recordings of this packet become candidates for later deletions.
    if (entity === 'recording')
      for (const line of lines.slice(0, 2)) earlier.push((JSON.parse(line) as { id: string }).id);
    dumps.push({ entity, lines });
  }
  const deletions = Array.from({ length: Math.min(DELETIONS_PER_PACKET, earlier.length) }, (_, n) => {
    const gid = earlier.splice((i * 7 + n * 13) % earlier.length, 1)[0]!;
    return {
      xid: 1000 + n,
      table: 'musicbrainz.recording',
      op: 'd' as const,
      oldData: { id: i * 100 + n + 1, gid, name: 'gone' },
    };
  });
  const timestamp = `${new Date(START + i * 3_600_000).toISOString().replace('T', ' ').replace('Z', '')}+00`;
  return { packet, timestamp, dumps, deletions };
}

interface BuiltPacket {
  plan: PacketPlan;
  dir: string;
  dumps: { entity: EntityType; path: string }[];
  replication: string;
}

async function buildArchives(plan: PacketPlan): Promise<BuiltPacket> {
  const dir = await mkdtemp(join(tmpdir(), 'lf-year-'));
  const dumps = await Promise.all(
    plan.dumps.map(async ({ entity, lines }) => {
      const path = await writeYearJsonDump(dir, {
        packet: plan.packet,
        entity,
        lines,
        timestamp: plan.timestamp,
      });
      return { entity, path };
    }),
  );
  const replication = await writeReplicationPacket(dir, {
    packet: plan.packet,
    format: 'v2',
    rows: plan.deletions,
    timestamp: plan.timestamp,
  });
  return { plan, dir, dumps, replication };
}

/** Stores one built packet as the sync would: its dumps, the rest settled, its replication packet. */
async function storePacket(store: Store, built: BuiltPacket, last: boolean): Promise<void> {
  const { packet } = built.plan;
  const at = new Date(Date.parse(built.plan.timestamp.replace(' ', 'T').replace('+00', 'Z')) + 5_400_000);
  const now = () => at;
  // In-process decoding: an xz process per dump would cost more than the dump's lines here.
  for (const dump of built.dumps)
    await ingestJsonDump(store, {
      packet,
      entity: dump.entity,
      archivePath: dump.path,
      file: null,
      now,
      decoder: 'lzma-native',
    });
  await storeReplicationPacket(store, packet, built.replication, { now });
  const stored = new Set(built.dumps.map((d) => d.entity));
  for (const entity of ENTITY_TYPES.filter((e) => !stored.has(e))) {
    markPending(store, packet, entity, at.toISOString());
    // The newest packet waits for one dump, as a live instance's newest packet does.
    if (!(last && entity === 'series')) markNoChanges(store, packet, entity, 'LATER_DUMP', at.toISOString());
  }
  completePackets(store, { from: packet, to: packet }, ENTITY_TYPES, () => true, at.toISOString());
}

/**
 * Builds (or reuses) the database at `path` for `recipe`. `log` gets progress lines.
 * @returns the number of changes stored.
 */
export async function buildYearDb(
  path: string,
  recipe: YearRecipe,
  log: (text: string) => void,
): Promise<void> {
  const recipeFile = `${path}.json`;
  const wanted = JSON.stringify({ ...recipe, version: RECIPE_VERSION });
  if (existsSync(path) && existsSync(recipeFile) && readFileSync(recipeFile, 'utf8') === wanted) return;
  for (const suffix of ['', '-wal', '-shm', '.json']) await rm(path + suffix, { force: true });
  const store = openStore(path);
  const samples = samplesByEntity();
  const earlier: string[] = [];
  const started = Date.now();
  try {
    const ahead: Promise<BuiltPacket>[] = [];
    const plan = (i: number) => buildArchives(planPacket(i, recipe, samples, earlier));
    for (let i = 0; i < Math.min(AHEAD, recipe.packets); i++) ahead.push(plan(i));
    for (let i = 0; i < recipe.packets; i++) {
      const built = await ahead.shift()!;
      if (i + AHEAD < recipe.packets) ahead.push(plan(i + AHEAD));
      await storePacket(store, built, i === recipe.packets - 1);
      await rm(built.dir, { recursive: true, force: true });
      if ((i + 1) % 100 === 0 || i === recipe.packets - 1)
        log(
          `  year database: ${i + 1}/${recipe.packets} packets, ${Math.round((Date.now() - started) / 1000)} s`,
        );
    }
    store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    store.close();
  }
  writeFileSync(recipeFile, wanted);
}

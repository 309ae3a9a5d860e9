import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENTITY_TYPES, type EntityType } from '../src/feed/entities.js';
import { createTestKeyHome, signFile, writeJsonDump } from '../test/support/archives.js';
import { artistRow, type FixtureRow, writeReplicationPacket } from '../test/support/replicationArchives.js';

/**
 * Feeds for the `sync --once` process bench (bench/syncProcess.ts, issue 16), built from the real
 * sample lines (/work/shared/samples, the same as fixtures/samples) with real tar, xz, bzip2 and gpg
 * (the test key), kept under bench/out/ while their recipe is unchanged:
 * - `lines3k`: one packet whose recording dump holds real recording lines (about 3 KB each);
 * - `lines6k`: the same with recording lines grown to 6–7 KB (40,000 lines, ~260 MB at scale 1);
 * - `day`: 24 packets, each with 11 JSON dumps and a replication packet (a day of catch-up);
 * - `packet`: one replication packet of 100,000 row changes (58 MB of tar), no JSON dump: the
 *   size of a busy hour's packet, for the sync's peak RSS.
 */

const SAMPLES = fileURLToPath(new URL('../fixtures/samples/', import.meta.url));
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const RECIPE = 1;

/** One built feed: its root folder, its packets and every archive in it (for the floor). */
export interface SyncFeed {
  root: string;
  from: number;
  to: number;
  /** JSON dumps: path and entity; replication packets: path. */
  dumps: { path: string; entity: EntityType }[];
  packets: string[];
  lines: number;
  /** Decompressed bytes of the JSON dumps' data members. */
  memberBytes: number;
}

/** The feeds. */
export interface SyncFeeds {
  lines3k: SyncFeed;
  lines6k: SyncFeed;
  day: SyncFeed;
  packet: SyncFeed;
}

function samples(entity: string): string[] {
  const file = join(SAMPLES, `${entity}.jsonl`);
  const from = existsSync(file) ? file : join(SAMPLES, 'artist.jsonl');
  return readFileSync(from, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

const fresh = (line: string) => line.replace(UUID, () => randomUUID());

/** A recording line grown to at least `bytes` by adding the relations of other sample recordings. */
function grown(lines: string[], i: number, bytes: number): string {
  const base = JSON.parse(lines[i % lines.length]!) as { relations?: unknown[] };
  const relations = [...(base.relations ?? [])];
  for (let j = i + 1; JSON.stringify({ ...base, relations }).length < bytes; j++) {
    const other = JSON.parse(lines[j % lines.length]!) as {
      relations?: unknown[];
      'artist-credit'?: unknown[];
    };
    relations.push(...(other.relations ?? []), ...(other['artist-credit'] ?? []));
  }
  return JSON.stringify({ ...base, relations });
}

/** `count` lines of `entity` from the samples (grown to `minBytes` when given), fresh UUIDs each. */
function* shaped(entity: string, count: number, minBytes = 0): Generator<string> {
  const lines = samples(entity);
  const pool = minBytes > 0 ? lines.map((_, i) => grown(lines, i, minBytes)) : lines;
  for (let i = 0; i < count; i++) yield fresh(pool[(i * 7919) % pool.length]!);
}

function counting(lines: Iterable<string>, feed: SyncFeed): Iterable<string> {
  return (function* () {
    for (const line of lines) {
      feed.lines++;
      feed.memberBytes += Buffer.byteLength(line) + 1;
      yield line;
    }
  })();
}

/** Artist row changes of one replication packet. */
function packetRows(count: number, seed: number): FixtureRow[] {
  return Array.from({ length: count }, (_, i) => {
    const id = seed * 100_000 + i;
    const row = artistRow({ id, gid: randomUUID(), name: `Artist ${id}`, comment: `bench ${i}` });
    const op = i % 10 === 9 ? 'd' : i % 3 === 0 ? 'u' : 'i';
    return {
      xid: 5_000_000 + seed * 1000 + Math.floor(i / 20),
      table: 'musicbrainz.artist',
      op,
      oldData: op === 'i' ? null : { ...row, name: `Old ${i}` },
      newData: op === 'd' ? null : row,
    };
  });
}

/** Lines per JSON dump of one hour of the day feed, by entity type (recording and release lead). */
const HOURLY: Partial<Record<EntityType, number>> = {
  recording: 2000,
  release: 600,
  artist: 300,
  'release-group': 300,
};

async function buildFeed(
  root: string,
  from: number,
  to: number,
  plan: (packet: number) => { entity: EntityType; lines: Iterable<string> }[],
  packetRowCount: number,
): Promise<SyncFeed> {
  const feed: SyncFeed = { root, from, to, dumps: [], packets: [], lines: 0, memberBytes: 0 };
  const keyHome = await createTestKeyHome();
  try {
    for (let packet = from; packet <= to; packet++) {
      for (const { entity, lines } of plan(packet)) {
        const built = await writeJsonDump(root, { packet, entity, lines: counting(lines, feed) });
        await signFile(built.path, keyHome, { fingerprint: keyHome.fingerprint });
        feed.dumps.push({ path: built.path, entity });
      }
      const path = await writeReplicationPacket(root, {
        packet,
        format: 'v2',
        rows: packetRows(packetRowCount, packet % 1000),
      });
      await signFile(path, keyHome, { fingerprint: keyHome.fingerprint });
      feed.packets.push(path);
    }
  } finally {
    await keyHome.close();
  }
  return feed;
}

/**
 * Builds (or reuses) the feeds under `<outDir>/sync-feeds`. `scale` multiplies the big dumps' line
 * counts and the day's (1: 80,000 lines of 3 KB, 40,000 of 6–7 KB, the day as {@link HOURLY}).
 */
export async function buildSyncFeeds(
  outDir: string,
  options: { scale?: number; rebuild?: boolean; log?: (text: string) => void },
): Promise<SyncFeeds> {
  const scale = options.scale ?? 1;
  const dir = join(outDir, 'sync-feeds');
  const meta = join(dir, 'feeds.json');
  const recipe = { version: RECIPE, scale };
  if (!options.rebuild && existsSync(meta)) {
    const kept = JSON.parse(await readFile(meta, 'utf8')) as { recipe: typeof recipe; feeds: SyncFeeds };
    if (JSON.stringify(kept.recipe) === JSON.stringify(recipe)) {
      // Feeds kept from before the packet feed existed: only it is built.
      if (kept.feeds.packet) return kept.feeds;
      const feeds = { ...kept.feeds, packet: await packetFeed(dir, scale) };
      await writeFile(meta, `${JSON.stringify({ recipe, feeds }, null, 2)}\n`);
      return feeds;
    }
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  options.log?.(`building the sync feeds at scale ${scale} (xz and gpg: minutes at scale 1)`);
  const n = (count: number) => Math.max(1, Math.round(count * scale));
  const feeds: SyncFeeds = {
    lines3k: await buildFeed(
      join(dir, 'lines3k'),
      910000,
      910000,
      () => [{ entity: 'recording', lines: shaped('recording', n(80_000)) }],
      200,
    ),
    lines6k: await buildFeed(
      join(dir, 'lines6k'),
      920000,
      920000,
      () => [{ entity: 'recording', lines: shaped('recording', n(40_000), 6500) }],
      200,
    ),
    day: await buildFeed(
      join(dir, 'day'),
      930000,
      930023,
      () => ENTITY_TYPES.map((entity) => ({ entity, lines: shaped(entity, n(HOURLY[entity] ?? 60)) })),
      n(2000),
    ),
    packet: await packetFeed(dir, scale),
  };
  await writeFile(meta, `${JSON.stringify({ recipe, feeds }, null, 2)}\n`);
  return feeds;
}

/** The `packet` feed: one replication packet of 100,000 row changes at scale 1, no JSON dump. */
function packetFeed(dir: string, scale: number): Promise<SyncFeed> {
  return buildFeed(join(dir, 'packet'), 940000, 940000, () => [], Math.max(1, Math.round(100_000 * scale)));
}

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { EntityType } from '../../src/feed/entities.js';
import { type BuiltFeedFile, writeJsonDump } from './archives.js';
import { writeReplicationPacket } from './replicationArchives.js';

/**
 * A feed folder of real JSON dump archives (tar + xz), bigger than the bundled demo feed, for
 * fault, crash and load tests: lines are the real sample lines (fixtures/samples) with a fresh MBID
 * and name each, and a few malformed lines that must end in quarantine.
 */

/** Options of {@link writeSyntheticFeed}. */
export interface SyntheticFeedOptions {
  firstPacket: number;
  /** Packets from `firstPacket` on; each gets a dump of every entity type in `entities`. */
  packets: number;
  entities: readonly EntityType[];
  linesPerDump: number;
  /** Every n-th line is malformed (alternately not JSON and without "id"); 0 for none. Default 0. */
  malformedEvery?: number;
  /** Packets (numbers) that get no dumps at all (the feed answers 404). */
  emptyPackets?: readonly number[];
  /**
   * Also write an empty replication packet for every packet, as upstream holds for every hour it
   * keeps: a sync without replication packets asks for it before a 404 settles (sync/hourHeld.ts).
   */
  heldHours?: boolean;
}

/** What was written. */
export interface SyntheticFeed {
  root: string;
  lastPacket: number;
  files: BuiltFeedFile[];
  /** Lines written in all dumps, malformed ones included. */
  lines: number;
}

const SAMPLES = new Map<string, string[]>();

function samples(entity: EntityType): string[] {
  const known = ['area', 'artist', 'label', 'recording', 'release', 'series', 'work'];
  const file = known.includes(entity) ? entity : 'artist';
  let lines = SAMPLES.get(file);
  if (!lines) {
    const text = readFileSync(
      fileURLToPath(new URL(`../../fixtures/samples/${file}.jsonl`, import.meta.url)),
      'utf8',
    );
    lines = text.split('\n').filter((l) => l.trim() !== '');
    SAMPLES.set(file, lines);
  }
  return lines;
}

/** A deterministic MBID for (packet, entity, n). */
export function syntheticMbid(packet: number, entity: string, n: number): string {
  const hex = createHash('sha1').update(`${packet}/${entity}/${n}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function* dumpLines(
  packet: number,
  entity: EntityType,
  count: number,
  malformedEvery: number,
): Generator<string> {
  const pool = samples(entity);
  for (let n = 1; n <= count; n++) {
    if (malformedEvery > 0 && n % malformedEvery === 0) {
      yield (n / malformedEvery) % 2 === 1 ? `{"id": "broken line ${n}"` : `{"name": "no id on line ${n}"}`;
      continue;
    }
    const value = JSON.parse(pool[n % pool.length]!) as Record<string, unknown>;
    value.id = syntheticMbid(packet, entity, n);
    value[value.title !== undefined ? 'title' : 'name'] = `${entity} ${packet}/${n}`;
    yield JSON.stringify(value);
  }
}

/**
 * Writes the feed under `root` (layout of FEED.md: `json-dumps/json-dump-<N>/<entity>.tar.xz`),
 * two archives at a time. Unsigned: tests run with verification off unless they sign.
 */
export async function writeSyntheticFeed(
  root: string,
  options: SyntheticFeedOptions,
): Promise<SyntheticFeed> {
  const jobs: (() => Promise<BuiltFeedFile>)[] = [];
  const empty = new Set(options.emptyPackets ?? []);
  for (let packet = options.firstPacket; packet < options.firstPacket + options.packets; packet++) {
    if (empty.has(packet)) continue;
    for (const entity of options.entities) {
      jobs.push(() =>
        writeJsonDump(root, {
          packet,
          entity,
          lines: dumpLines(packet, entity, options.linesPerDump, options.malformedEvery ?? 0),
        }),
      );
    }
  }
  if (options.heldHours) {
    for (let packet = options.firstPacket; packet < options.firstPacket + options.packets; packet++)
      await writeReplicationPacket(root, { packet, format: 'v2', rows: [] });
  }
  const files: BuiltFeedFile[] = [];
  const worker = async () => {
    for (let job = jobs.shift(); job; job = jobs.shift()) files.push(await job());
  };
  await Promise.all([worker(), worker()]);
  files.sort((a, b) => a.feedPath.localeCompare(b.feedPath));
  const dumps = files.length;
  return {
    root,
    lastPacket: options.firstPacket + options.packets - 1,
    files,
    lines: dumps * options.linesPerDump,
  };
}

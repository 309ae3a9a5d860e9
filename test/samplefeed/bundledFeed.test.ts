import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITY_TYPES } from '../../src/feed/entities.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
import { createTestKeyHome, type TestKeyHome, verifyWithGpg } from '../support/archives.js';
import { type FixtureManifest, readBundledManifest } from '../support/manifest.js';
import { runPiped } from '../support/processes.js';
import { rawRequest } from '../support/rawHttp.js';

let manifest: FixtureManifest;
let feed: SampleFeed;
let verifier: TestKeyHome;

const fetchFile = (path: string) =>
  rawRequest(feed.feedRoot, `/api/musicbrainz/${path}?token=${SAMPLE_TOKEN}`);
const dumps = () =>
  manifest.packets.flatMap((packet) =>
    Object.entries(packet.jsonDumps).map(([entity, dump]) => ({ packet, entity, dump: dump! })),
  );

beforeAll(async () => {
  manifest = readBundledManifest();
  feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  verifier = await createTestKeyHome({ secret: false });
});

afterAll(async () => {
  await feed?.close();
  await verifier?.close();
});

describe('bundled demo feed (fixtures/feed)', () => {
  it('lives in fixtures/feed', () => {
    expect(BUNDLED_FEED_ROOT).toBe(fileURLToPath(new URL('../../fixtures/feed', import.meta.url)));
  });

  it('announces its last packet in replication-info', async () => {
    const res = await fetchFile('replication-info');
    expect(JSON.parse(res.body.toString())).toEqual({
      last_packet: `replication-${manifest.lastPacket}.tar.bz2`,
    });
  });

  it('serves every file byte-identical to the fixture, and 404 for the others', async () => {
    for (const packet of manifest.packets) {
      for (const entity of ENTITY_TYPES) {
        const dump = packet.jsonDumps[entity];
        const path = `json-dumps/json-dump-${packet.number}/${entity}.tar.xz`;
        const res = await fetchFile(path);
        if (!dump) {
          expect([path, res.status, res.body.toString()]).toEqual([
            path,
            404,
            "Can't find specified JSON dump!",
          ]);
          continue;
        }
        expect(dump.file).toBe(path);
        const onDisk = await readFile(join(BUNDLED_FEED_ROOT, dump.file));
        expect(res.status).toBe(200);
        expect(res.body.equals(onDisk)).toBe(true);
        expect(createHash('sha256').update(res.body).digest('hex')).toBe(dump.sha256);
        expect(res.body.length).toBe(dump.bytes);
        const signature = await fetchFile(dump.signature);
        expect(signature.body.equals(await readFile(join(BUNDLED_FEED_ROOT, dump.signature)))).toBe(true);
      }
    }
  });

  it('holds what the manifest says: sequence, timestamp, MBIDs in file order, valid signatures', async () => {
    for (const { packet, entity, dump } of dumps()) {
      const file = join(BUNDLED_FEED_ROOT, dump.file);
      const read = async (name: string) =>
        (await runPiped(
          { cmd: 'xz', args: ['-dc', file] },
          { cmd: 'tar', args: ['-xOf', '-', name] },
        ))!.toString();
      expect(await read('REPLICATION_SEQUENCE')).toBe(`${packet.number}\n`);
      expect(await read('TIMESTAMP')).toBe(`${packet.timestamp}\n`);
      expect(await read('SCHEMA_SEQUENCE')).toBe(`${manifest.schemaSequence}\n`);
      const lines = (await read(`mbdump/${entity}`)).split('\n');
      expect(lines.pop()).toBe('');
      const parsed = lines.map((line) => JSON.parse(line) as { id: string; name?: string; title?: string });
      expect(parsed.map((line) => line.id)).toEqual(dump.mbids);
      expect(parsed.map((line) => line.name ?? line.title)).toEqual(dump.names);
      await verifyWithGpg(file, join(BUNDLED_FEED_ROOT, dump.signature), verifier);
    }
  });

  it('has the promised shape: 24 hourly packets, gaps, one empty packet, entity history', () => {
    const numbers = manifest.packets.map((packet) => packet.number);
    expect(numbers).toEqual(Array.from({ length: 24 }, (_, i) => manifest.firstPacket + i));
    expect(numbers.at(-1)).toBe(manifest.lastPacket);
    const hours = manifest.packets.map((packet) =>
      Date.parse(packet.timestamp.replace(' ', 'T').replace(/\+00$/, 'Z')),
    );
    expect(hours.slice(1).map((at, i) => at - hours[i]!)).toEqual(Array(23).fill(3_600_000));
    expect(manifest.packets.filter((packet) => Object.keys(packet.jsonDumps).length === 0)).toHaveLength(1);
    expect(Object.keys(manifest.packets.at(-1)!.jsonDumps).length).toBeGreaterThan(0);

    const packetsPerEntity = new Map<string, number>();
    const versions = new Map<string, Set<string>>();
    for (const { entity, dump } of dumps()) {
      packetsPerEntity.set(entity, (packetsPerEntity.get(entity) ?? 0) + 1);
      dump.mbids.forEach((mbid, i) => {
        versions.set(mbid, (versions.get(mbid) ?? new Set()).add(`${entity}:${dump.names[i]}`));
      });
    }
    for (const [entity, count] of packetsPerEntity) expect([entity, count >= 3]).toEqual([entity, true]);
    const appearances = (mbid: string) => dumps().filter(({ dump }) => dump.mbids.includes(mbid)).length;
    const repeated = [...versions.keys()].filter((mbid) => appearances(mbid) >= 2);
    expect(repeated.length).toBeGreaterThanOrEqual(3);
    // Recording 08d9d7a1 changes its title between its two packets.
    expect(versions.get('08d9d7a1-45f9-4be5-b449-04b2374bcb1c')?.size).toBe(2);
  });

  it('stays small (well under 1 MB)', async () => {
    let total = 0;
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) await walk(path);
        else total += (await stat(path)).size;
      }
    };
    await walk(BUNDLED_FEED_ROOT);
    expect(total).toBeLessThan(512 * 1024);
  });
});

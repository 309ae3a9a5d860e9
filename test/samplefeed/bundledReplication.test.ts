import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
import { createTestKeyHome, type TestKeyHome, verifyWithGpg } from '../support/archives.js';
import { readBundledManifest } from '../support/manifest.js';
import { run } from '../support/processes.js';
import { rawRequest } from '../support/rawHttp.js';

const manifest = readBundledManifest();
let feed: SampleFeed;
let verifier: TestKeyHome;

const fetchFile = (path: string) =>
  rawRequest(feed.feedRoot, `/api/musicbrainz/${path}?token=${SAMPLE_TOKEN}`);

beforeAll(async () => {
  feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
  verifier = await createTestKeyHome({ secret: false });
});
afterAll(async () => {
  await feed?.close();
  await verifier?.close();
});

describe('replication packets of the bundled demo feed', () => {
  it('every packet has a signed v2 packet (production naming), served byte for byte; no test-deployment names', async () => {
    for (const packet of manifest.packets) {
      const replication = packet.replication!;
      expect(replication.file).toBe(`replication-${packet.number}-v2.tar.bz2`);
      expect(replication.format).toBe('v2');
      const res = await fetchFile(replication.file);
      expect(res.status).toBe(200);
      expect(res.body.equals(await readFile(join(BUNDLED_FEED_ROOT, replication.file)))).toBe(true);
      expect(res.body.length).toBe(replication.bytes);
      expect(createHash('sha256').update(res.body).digest('hex')).toBe(replication.sha256);
      await verifyWithGpg(
        join(BUNDLED_FEED_ROOT, replication.file),
        join(BUNDLED_FEED_ROOT, replication.signature),
        verifier,
      );
      const plain = await fetchFile(`replication-${packet.number}.tar.bz2`);
      expect([plain.status, plain.body.toString()]).toEqual([
        404,
        "Can't find specified replication packet!\n",
      ]);
    }
  });

  it('holds what the manifest says: members, sequence, TIMESTAMP equal to the dumps, one pending_data line per row', async () => {
    for (const packet of manifest.packets) {
      const replication = packet.replication!;
      const file = join(BUNDLED_FEED_ROOT, replication.file);
      const tar = async (...args: string[]) =>
        (await run({ cmd: 'tar', args: ['-xjOf', file, ...args] })).toString();
      const members = (await run({ cmd: 'tar', args: ['-tjf', file] })).toString();
      expect(members.split('\n').filter(Boolean)).toEqual([
        'TIMESTAMP',
        'COPYING',
        'README',
        'REPLICATION_SEQUENCE',
        'SCHEMA_SEQUENCE',
        'DBMIRROR_VERSION',
        'mbdump/',
        'mbdump/pending_data',
        'mbdump/pending_keys',
        'mbdump/pending_ts',
      ]);
      expect(await tar('REPLICATION_SEQUENCE')).toBe(`${packet.number}\n`);
      expect(await tar('TIMESTAMP')).toBe(`${packet.timestamp}\n`);
      expect(replication.timestamp).toBe(packet.timestamp);
      const data = (await tar('mbdump/pending_data')).split('\n').filter(Boolean);
      expect(data.map((line) => Number(line.split('\t')[0]))).toEqual(
        replication.rows.map((row) => row.seqid),
      );
      expect(replication.rowCount).toBe(replication.rows.length);
    }
  });

  it('tells one story with the JSON dumps: a deletion and a merge of MBIDs the dumps held, never held again', () => {
    const removals = manifest.packets.flatMap((packet) =>
      packet.replication!.removals.map((removal) => ({ ...removal, packet: packet.number })),
    );
    expect(removals.map((removal) => removal.kind).sort()).toEqual(['DELETED', 'MERGED']);
    const dumped = (mbid: string) =>
      manifest.packets
        .filter((packet) => Object.values(packet.jsonDumps).some((dump) => dump!.mbids.includes(mbid)))
        .map((packet) => packet.number);
    for (const removal of removals) {
      expect(dumped(removal.mbid).length).toBeGreaterThan(0);
      expect(Math.max(...dumped(removal.mbid))).toBeLessThan(removal.packet);
      if (removal.kind === 'MERGED') expect(dumped(removal.mergedInto!)).toContain(removal.packet);
    }
    // Every artist, label and recording line of a dump is a row change of that entity in the same packet.
    for (const packet of manifest.packets) {
      for (const entity of ['artist', 'label', 'recording'] as const) {
        const changed = packet
          .replication!.rows.filter((row) => row.table === `musicbrainz.${entity}` && row.op !== 'd')
          .map((row) => row.newData!.gid);
        expect(changed, `${packet.number} ${entity}`).toEqual(packet.jsonDumps[entity]?.mbids ?? []);
      }
    }
  });
});

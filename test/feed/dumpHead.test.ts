import { randomBytes } from 'node:crypto';
import { truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDumpHead } from '../../src/feed/dumpHead.js';
import { readJsonDump } from '../../src/feed/jsonDump.js';
import { type JsonDumpOptions, jsonDumpMembers, writeJsonDump } from '../support/archives.js';
import { tempDir } from '../support/harness.js';

/**
 * readDumpHead (bootstrap learns a full dump's packet with it) finds REPLICATION_SEQUENCE wherever
 * it stands (FEED.md, JSON dump archives: "Do not rely on member order"), and decompresses no more
 * than it needs: real xz tar archives, some cut short after the point where it must stop.
 */

const LINE = JSON.stringify({ id: '00000000-0000-4000-8000-000000000001', name: 'A' });
const DATA = 'mbdump/area';
const UPSTREAM = jsonDumpMembers('area');
/** Upstream's order with REPLICATION_SEQUENCE moved after the data and JSON_DUMPS_SCHEMA_NUMBER. */
const SEQUENCE_LAST = [...UPSTREAM.filter((name) => name !== 'REPLICATION_SEQUENCE'), 'REPLICATION_SEQUENCE'];
/** 512 KB of lines that xz cannot shrink much: the archive's bytes are mostly the data's. */
const bigLines = () =>
  Array.from({ length: 32 }, () =>
    JSON.stringify({ id: '00000000-0000-4000-8000-000000000002', blob: randomBytes(8192).toString('hex') }),
  );

describe('readDumpHead', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let count = 0;
  const build = (options: Partial<JsonDumpOptions>) =>
    writeJsonDump(join(tmp.dir, String(++count)), { packet: 7, entity: 'area', lines: [LINE], ...options });
  beforeAll(async () => {
    tmp = await tempDir('lf-head-');
  });
  afterAll(() => tmp?.cleanup());

  for (const [what, memberOrder] of [
    ["upstream's order", UPSTREAM],
    ['REPLICATION_SEQUENCE after the data', SEQUENCE_LAST],
    ['the data first, every small member after it', [DATA, ...UPSTREAM.filter((name) => name !== DATA)]],
  ] as const) {
    it(`returns REPLICATION_SEQUENCE and the data member in ${what}`, async () => {
      const built = await build({ memberOrder });
      await expect(readDumpHead(built.path)).resolves.toEqual({ replicationSequence: 7, dataMember: 'area' });
    });
  }

  for (const decoder of ['xz', 'lzma-native'] as const) {
    it(`stops at the data member when REPLICATION_SEQUENCE precedes it (${decoder}): a cut data member is not read`, async () => {
      const built = await build({ lines: bigLines() });
      await truncate(built.path, Math.floor(built.bytes / 2));
      // The cut is real: reading the whole archive fails on it.
      await expect(
        readJsonDump(built.path, { packet: 7, entity: 'area', decoder }, () => {}),
      ).rejects.toThrow();
      await expect(readDumpHead(built.path, decoder)).resolves.toEqual({
        replicationSequence: 7,
        dataMember: 'area',
      });
    });

    it(`skips the data to a later REPLICATION_SEQUENCE and stops there (${decoder}): a cut member after it is not read`, async () => {
      const built = await build({
        lines: bigLines(),
        memberOrder: [DATA, ...UPSTREAM.filter((name) => name !== DATA)],
        extraMembers: [{ name: 'padding', content: randomBytes(512 * 1024) }],
      });
      await truncate(built.path, built.bytes - 256 * 1024);
      await expect(
        readJsonDump(built.path, { packet: 7, entity: 'area', decoder }, () => {}),
      ).rejects.toThrow();
      await expect(readDumpHead(built.path, decoder)).resolves.toEqual({
        replicationSequence: 7,
        dataMember: 'area',
      });
    });
  }

  it('names a REPLICATION_SEQUENCE missing from the whole archive, the data first', async () => {
    const built = await build({
      omitMembers: ['REPLICATION_SEQUENCE'],
      memberOrder: [DATA, 'TIMESTAMP', 'COPYING', 'README', 'SCHEMA_SEQUENCE', 'JSON_DUMPS_SCHEMA_NUMBER'],
    });
    await expect(readDumpHead(built.path)).rejects.toThrow(
      `${built.path}: REPLICATION_SEQUENCE is missing from the archive`,
    );
  });

  it('names a malformed REPLICATION_SEQUENCE after the data', async () => {
    const built = await build({
      omitMembers: ['REPLICATION_SEQUENCE'],
      extraMembers: [{ name: 'REPLICATION_SEQUENCE', content: 'seven\n' }],
    });
    await expect(readDumpHead(built.path)).rejects.toThrow(
      `${built.path}: REPLICATION_SEQUENCE is not a number: "seven"`,
    );
  });

  it('names an archive without an mbdump/ member', async () => {
    const built = await build({ omitMembers: [DATA] });
    await expect(readDumpHead(built.path)).rejects.toThrow(
      `${built.path}: no member mbdump/<entity> in the archive`,
    );
  });
});

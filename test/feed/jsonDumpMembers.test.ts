import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import { type JsonDumpMetadata, readJsonDump } from '../../src/feed/jsonDump.js';
import { BUNDLED_FEED_ROOT } from '../../src/samplefeed/server.js';
import { ingestJsonDump } from '../../src/sync/ingest.js';
import { writeJsonDump } from '../support/archives.js';
import { tempDir } from '../support/harness.js';

/**
 * Issue 11: the producer writes JSON_DUMPS_SCHEMA_NUMBER after mbdump/<entity> (FEED.md, JSON dump
 * archives); it must be read wherever it stands, in real xz tar archives.
 */

const LINE = JSON.stringify({ id: '00000000-0000-4000-8000-000000000001', name: 'A' });

describe('JSON_DUMPS_SCHEMA_NUMBER wherever it stands', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    tmp = await tempDir('lf-members-');
  });
  afterAll(() => tmp?.cleanup());

  for (const at of ['after-data', 'before-data'] as const) {
    it(`reads it ${at === 'after-data' ? 'after the data, as the producer writes it' : 'before the data'}`, async () => {
      const root = join(tmp.dir, at);
      const built = await writeJsonDump(root, {
        packet: 3,
        entity: 'area',
        lines: [LINE],
        schemaNumberAt: at,
      });
      const seen: JsonDumpMetadata[] = [];
      const lines: string[] = [];
      const summary = await readJsonDump(
        built.path,
        { packet: 3, entity: 'area', onMetadata: (m) => seen.push(m) },
        (line) => lines.push(line.toString()),
      );
      expect(summary.metadata).toMatchObject({ replicationSequence: 3, jsonDumpsSchemaNumber: 1 });
      expect(lines).toEqual([LINE]);
      expect(seen).toHaveLength(1);
    });
  }

  it("the bundled sample feed is built in the producer's order and reads as schema number 1", async () => {
    const path = join(BUNDLED_FEED_ROOT, 'json-dumps/json-dump-186100/area.tar.xz');
    const names = execFileSync('sh', ['-c', 'xz -dc "$0" | tar -tf -', path], { encoding: 'utf8' });
    expect(names.trim().split('\n').slice(-2)).toEqual(['mbdump/area', 'JSON_DUMPS_SCHEMA_NUMBER']);
    const summary = await readJsonDump(path, { packet: 186100, entity: 'area' }, () => {});
    expect(summary.metadata.jsonDumpsSchemaNumber).toBe(1);
  });

  it('is null only when the archive has no such member', async () => {
    const built = await writeJsonDump(join(tmp.dir, 'none'), {
      packet: 4,
      entity: 'area',
      lines: [LINE],
      omitMembers: ['JSON_DUMPS_SCHEMA_NUMBER'],
    });
    const summary = await readJsonDump(built.path, { packet: 4, entity: 'area' }, () => {});
    expect(summary.metadata.jsonDumpsSchemaNumber).toBeNull();
  });

  it('rejects a malformed number after the data, naming the member', async () => {
    const built = await writeJsonDump(join(tmp.dir, 'bad'), {
      packet: 5,
      entity: 'area',
      lines: [LINE],
      omitMembers: ['JSON_DUMPS_SCHEMA_NUMBER'],
      extraMembers: [{ name: 'JSON_DUMPS_SCHEMA_NUMBER', content: 'two\n' }],
    });
    await expect(readJsonDump(built.path, { packet: 5, entity: 'area' }, () => {})).rejects.toThrow(
      /JSON dump area of packet 5: member JSON_DUMPS_SCHEMA_NUMBER is not a number/,
    );
  });

  it('records a number other than 1 as an event of the packet, once, and still stores the dump', async () => {
    const store = openStore(join(tmp.dir, 'events.db'));
    try {
      for (const entity of ['area', 'label'] as const) {
        const built = await writeJsonDump(join(tmp.dir, 'v2'), {
          packet: 6,
          entity,
          lines: [LINE.replace('000000000001', entity === 'area' ? '000000000006' : '000000000007')],
          jsonDumpsSchemaNumber: 2,
        });
        const result = await ingestJsonDump(store, {
          packet: 6,
          entity,
          archivePath: built.path,
          file: null,
        });
        expect(result.metadata.jsonDumpsSchemaNumber).toBe(2);
      }
      const events = store.sqlite.prepare('SELECT packet, kind, message FROM events').all();
      expect(events).toEqual([
        {
          packet: 6,
          kind: 'json-dump-schema',
          message: expect.stringContaining('has JSON_DUMPS_SCHEMA_NUMBER 2, expected 1'),
        },
      ]);
      expect(store.sqlite.prepare(`SELECT count(*) AS n FROM dumps WHERE status = 'SYNCED'`).get()).toEqual({
        n: 2,
      });
    } finally {
      store.close();
    }
  });
});

import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/client.js';
import { ArchiveError, SequenceMismatchError } from '../../src/feed/errors.js';
import { type JsonDumpMetadata, readJsonDump } from '../../src/feed/jsonDump.js';
import { ingestJsonDump } from '../../src/sync/ingest.js';
import { type JsonDumpOptions, jsonDumpMembers, writeJsonDump } from '../support/archives.js';
import { tempDir } from '../support/harness.js';

/**
 * FEED.md, JSON dump archives: "Do not rely on member order: read the small members wherever they
 * stand". Real xz tar archives with REPLICATION_SEQUENCE, TIMESTAMP and SCHEMA_SEQUENCE before,
 * after and around mbdump/<entity>.
 */

const LINES = [
  JSON.stringify({ id: '00000000-0000-4000-8000-000000000001', name: 'A' }),
  JSON.stringify({ id: '00000000-0000-4000-8000-000000000002', name: 'B' }),
];
const DATA = 'mbdump/area';
const SMALL = ['TIMESTAMP', 'REPLICATION_SEQUENCE', 'SCHEMA_SEQUENCE', 'JSON_DUMPS_SCHEMA_NUMBER'];
const COMPLETE: JsonDumpMetadata = {
  replicationSequence: 3,
  schemaSequence: 31,
  timestamp: '2026-05-11T21:14:26.878674Z',
  jsonDumpsSchemaNumber: 1,
};

/** Every order of `items`. */
function permutations(items: readonly string[]): string[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** Reads `path` as area of `packet`, recording lines and onMetadata calls in the order they came. */
async function readRecorded(path: string, packet = 3) {
  const events: string[] = [];
  const seen: JsonDumpMetadata[] = [];
  const read = readJsonDump(
    path,
    {
      packet,
      entity: 'area',
      onMetadata: (metadata) => {
        events.push('metadata');
        seen.push(metadata);
      },
    },
    (line) => events.push(line.toString()),
  );
  const summary = await read.catch((error: unknown) => error);
  return { summary, events, seen };
}

describe('JSON dump members in any order', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let count = 0;
  const build = (options: Partial<JsonDumpOptions>) =>
    writeJsonDump(join(tmp.dir, String(++count)), { packet: 3, entity: 'area', lines: LINES, ...options });
  beforeAll(async () => {
    tmp = await tempDir('lf-order-');
  });
  afterAll(() => tmp?.cleanup());

  // COPYING and README first, as upstream; the three required members and the data in all 24
  // orders, each with JSON_DUMPS_SCHEMA_NUMBER just before the data or last (48 archives, ~2 s).
  const orders = permutations(['TIMESTAMP', 'REPLICATION_SEQUENCE', 'SCHEMA_SEQUENCE', DATA]).flatMap(
    (order) => [
      [
        ...order.slice(0, order.indexOf(DATA)),
        'JSON_DUMPS_SCHEMA_NUMBER',
        ...order.slice(order.indexOf(DATA)),
      ],
      [...order, 'JSON_DUMPS_SCHEMA_NUMBER'],
    ],
  );
  it('reads the lines and the metadata in every order of the small members and the data', async () => {
    expect(new Set(orders.map((order) => order.join())).size).toBe(48);
    for (const order of orders) {
      const built = await build({ memberOrder: ['COPYING', 'README', ...order] });
      const { summary, events, seen } = await readRecorded(built.path);
      const before = (name: string) => order.indexOf(name) < order.indexOf(DATA);
      const early = ['TIMESTAMP', 'REPLICATION_SEQUENCE', 'SCHEMA_SEQUENCE'].every(before);
      const context = order.join(',');
      expect(summary, context).toEqual({ metadata: COMPLETE, lineCount: 2, bytes: expect.any(Number) });
      // Exactly once: before the first line when the required members precede the data, else last.
      expect(events, context).toEqual(early ? ['metadata', ...LINES] : [...LINES, 'metadata']);
      const schemaNumber = early && !before('JSON_DUMPS_SCHEMA_NUMBER') ? null : 1;
      expect(seen, context).toEqual([{ ...COMPLETE, jsonDumpsSchemaNumber: schemaNumber }]);
    }
  }, 120_000);

  it('reads an archive whose data member comes first, before COPYING and README too', async () => {
    const built = await build({
      memberOrder: [
        DATA,
        'JSON_DUMPS_SCHEMA_NUMBER',
        'README',
        'SCHEMA_SEQUENCE',
        'COPYING',
        'TIMESTAMP',
        'REPLICATION_SEQUENCE',
      ],
    });
    const { summary, events, seen } = await readRecorded(built.path);
    expect(summary).toMatchObject({ metadata: COMPLETE, lineCount: 2 });
    expect(events).toEqual([...LINES, 'metadata']);
    expect(seen).toEqual([COMPLETE]);
  });

  it('fails on a wrong REPLICATION_SEQUENCE after the data once the archive is read, not calling onMetadata', async () => {
    const built = await build({ replicationSequence: 2, memberOrder: moveAfterData('REPLICATION_SEQUENCE') });
    const { summary, events, seen } = await readRecorded(built.path);
    expect(summary).toBeInstanceOf(ArchiveError);
    expect((summary as Error).message).toMatch(
      /^JSON dump area of packet 3: REPLICATION_SEQUENCE is 2, expected 3$/,
    );
    expect(events).toEqual(LINES);
    expect(seen).toEqual([]);
  });

  // Fail fast: a huge dump is not stored line by line when the members already read condemn it.
  for (const [what, options, message] of [
    [
      'a wrong REPLICATION_SEQUENCE',
      { replicationSequence: 2, memberOrder: moveAfterData('TIMESTAMP') },
      /REPLICATION_SEQUENCE is 2, expected 3/,
    ],
    [
      'a malformed TIMESTAMP',
      { timestamp: 'yesterday', memberOrder: moveAfterData('REPLICATION_SEQUENCE') },
      /member TIMESTAMP: /,
    ],
    [
      'a malformed SCHEMA_SEQUENCE',
      { schemaSequence: -1, memberOrder: moveAfterData('REPLICATION_SEQUENCE') },
      /member SCHEMA_SEQUENCE is not a number/,
    ],
  ] as const) {
    it(`fails on ${what} before the data before any line, when other members follow the data`, async () => {
      const { summary, events, seen } = await readRecorded((await build(options)).path);
      expect(summary).toBeInstanceOf(ArchiveError);
      expect((summary as Error).message).toMatch(message);
      expect(events).toEqual([]);
      expect(seen).toEqual([]);
    });
  }

  for (const missing of ['TIMESTAMP', 'REPLICATION_SEQUENCE', 'SCHEMA_SEQUENCE']) {
    for (const at of ['before', 'after'] as const) {
      it(`names a missing ${missing} when the other members stand ${at} the data`, async () => {
        const rest = SMALL.filter((name) => name !== missing);
        const built = await build({
          omitMembers: [missing],
          memberOrder:
            at === 'before' ? ['COPYING', 'README', ...rest, DATA] : [DATA, 'COPYING', 'README', ...rest],
        });
        const { summary, seen } = await readRecorded(built.path);
        expect(summary).toBeInstanceOf(ArchiveError);
        expect((summary as Error).message).toBe(`JSON dump area of packet 3: member ${missing} is missing`);
        expect(seen).toEqual([]);
      });
    }
  }

  it('refuses a metadata member given twice, as the value checked early could differ from the last', async () => {
    // writeTarArchive refuses repeated names; tar itself writes them (a second -C folder, then xz).
    const dirs = [join(tmp.dir, 'dup1'), join(tmp.dir, 'dup2')];
    const one = await build({ memberOrder: moveAfterData() });
    execFileSync('sh', [
      '-c',
      `mkdir -p "$0" "$1" && cd "$0" && xz -dc "$2" | tar -xf -`,
      dirs[0]!,
      dirs[1]!,
      one.path,
    ]);
    await writeFile(join(dirs[1]!, 'TIMESTAMP'), '2026-05-11 22:00:00+00\n');
    const path = join(tmp.dir, 'dup.tar.xz');
    const members = moveAfterData().join(' ');
    execFileSync('sh', [
      '-c',
      `tar -cf - -C "$0" ${members} -C "$1" TIMESTAMP | xz -c > "$2"`,
      dirs[0]!,
      dirs[1]!,
      path,
    ]);
    const { summary, events, seen } = await readRecorded(path);
    expect((summary as Error).message).toBe('JSON dump area of packet 3: member TIMESTAMP appears twice');
    expect(events).toEqual(['metadata', ...LINES]);
    expect(seen).toHaveLength(1);
  });

  it('still names an absent data member when the metadata would follow it', async () => {
    const built = await build({ omitMembers: [DATA], memberOrder: ['COPYING', 'README', ...SMALL] });
    const { summary } = await readRecorded(built.path);
    expect((summary as Error).message).toBe('JSON dump area of packet 3: archive has no member mbdump/area');
  });

  it('rolls the SQLite ingest back when a late REPLICATION_SEQUENCE is wrong: nothing stored', async () => {
    const store = openStore(join(tmp.dir, 'ingest.db'));
    try {
      const rows = () => ({
        changes: store.sqlite.prepare('SELECT mbid, packet FROM changes ORDER BY id').all(),
        dumps: store.sqlite.prepare('SELECT packet, entity, status FROM dumps').all(),
        quarantine: store.sqlite.prepare('SELECT count(*) AS n FROM quarantine').get(),
        packets: store.sqlite.prepare('SELECT number FROM packets').all(),
      });
      // An earlier good copy of the dump: the failed one must not replace (delete) it either.
      const good = await build({ lines: [LINES[0]!] });
      await ingestJsonDump(store, { packet: 3, entity: 'area', archivePath: good.path, file: null });
      const before = rows();
      expect(before.changes).toHaveLength(1);
      const bad = await build({
        replicationSequence: 4,
        lines: [...LINES, 'not json'],
        memberOrder: [DATA, 'COPYING', 'README', ...SMALL],
      });
      await expect(
        ingestJsonDump(store, { packet: 3, entity: 'area', archivePath: bad.path, file: null }),
      ).rejects.toThrow(new SequenceMismatchError('JSON dump area of packet 3', 4, 3));
      expect(rows()).toEqual(before);
      // And into an empty database, the same failure leaves no row at all.
      const empty = openStore(join(tmp.dir, 'empty.db'));
      try {
        await expect(
          ingestJsonDump(empty, { packet: 3, entity: 'area', archivePath: bad.path, file: null }),
        ).rejects.toThrow(ArchiveError);
        for (const table of ['changes', 'dumps', 'quarantine', 'packets', 'events']) {
          expect(empty.sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get(), table).toEqual({ n: 0 });
        }
      } finally {
        empty.close();
      }
    } finally {
      store.close();
    }
  });
});

/** Upstream's order (FEED.md) with the members `later` moved after the data, in that order. */
function moveAfterData(...later: string[]): string[] {
  return [...jsonDumpMembers('area').filter((name) => !later.includes(name)), ...later];
}

import { afterAll, beforeAll, expect, it } from 'vitest';
import { changeId, dumpIdRange } from '../../../src/db/keys.js';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { FIELD_COLUMNS_PG, PARSED_LINE } from '../../../src/db/postgres/searchFields.js';
import { ingestJsonDumpPostgres } from '../../../src/sync/postgres/ingest.js';
import { writeJsonDump } from '../../support/archives.js';
import { tempDir } from '../../support/harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

// The PostgreSQL ingest stages the search index's columns it finds in its one pass over the lines
// (sync/postgres/searchStage.ts) instead of parsing each stored line as jsonb again: the index must
// hold exactly what the jsonb path (FIELD_COLUMNS_PG over PARSED_LINE) reads from the same lines.

const mbid = (n: number) => `e0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const line = (n: number, fields: Record<string, unknown>) => JSON.stringify({ id: mbid(n), ...fields });
/** A line written by hand, for escapes JSON.stringify would not write. */
const raw = (n: number, members: string) => `{"id":"${mbid(n)}",${members}}`;

/** Lines of a titled entity type (work): every shape of value the columns can meet. */
const WORKS = [
  line(1, { title: 'Plain Title', name: 'Not the title', 'sort-name': 'Plain', disambiguation: 'plain' }),
  line(2, { title: 'Grosse Boîte 😀 Œuvre', 'sort-name': null, aliases: [] }),
  raw(3, '"title":"Escaped \\u00e9 \\"quoted\\" back\\\\slash \\/ solidus"'),
  raw(4, '"title":"Pair \\ud83d\\ude00 escaped","disambiguation":"raw 😀"'),
  raw(5, '"title":"Nul\\u0000Byte"'),
  raw(6, '"title":"Lone \\udc00 low"'),
  raw(7, '"title":"New\\nline\\ttab\\rcr","sort-name":"\\\\N","disambiguation":"\\\\."'),
  raw(8, '"title":"control \\u0001 \\u0002 \\u001f","sort-name":""'),
  line(9, { title: 42, 'sort-name': 'Number title' }),
  line(10, { title: 'Object', disambiguation: { b: 1, a: [true, null] } }),
  line(11, {
    title: 'Aliases',
    aliases: [
      { name: 'Same', 'sort-name': 'Same' },
      { name: 'Name', 'sort-name': 'Sort, Name' },
      { name: 'Only name' },
      { 'sort-name': 'Only sort' },
      { name: null, 'sort-name': null },
      { name: '', 'sort-name': '' },
      'not an object',
      null,
      { name: 'Tab\there', locale: 'en' },
    ],
  }),
  line(12, { title: 'Aliases not an array', aliases: { name: 'x' } }),
  line(13, { title: 'Alias number', aliases: [{ name: 7, 'sort-name': '7' }] }),
  raw(14, '"title":"Escaped alias","aliases":[{"name":"\\u00c9mile \\"E\\"","sort-name":"\\ud800"}]'),
  line(15, { title: true, 'sort-name': false, disambiguation: 1.5 }),
  line(16, {}),
  // The same MBID again: only the later line is its newest, so only it is indexed.
  line(1, { title: 'Plain Title, later line' }),
  // A raw 0x01 in a string: refused by the one-pass check, stored re-escaped (no spans).
  `{"id": "${mbid(17)}", "title": "raw\u0001control"}`,
  // Large aliases: the staged columns pass their bound in memory and are copied mid-dump.
  ...Array.from({ length: 30 }, (_, i) =>
    line(100 + i, {
      title: `Big ${i}`,
      aliases: Array.from({ length: 1500 }, (_, j) => ({ name: `alias ${i} ${j} ${'w'.repeat(80)}` })),
    }),
  ),
];

/** An untitled entity type (artist): `name` names it, `title` is any member. */
const ARTISTS = [
  line(201, { name: 'Artist Name', title: 'Not the name', 'sort-name': 'Name, Artist' }),
  line(202, { title: 'Only a title' }),
  raw(203, '"name":"\\u00c6nima","sort-name":"\\u00c6nima"'),
];

describePostgres('the search columns staged by the PostgreSQL ingest', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  let dir: Awaited<ReturnType<typeof tempDir>>;

  const ingest = async (packet: number, entity: 'work' | 'artist', lines: string[]) => {
    const { path } = await writeJsonDump(dir.dir, { packet, entity, lines });
    await ingestJsonDumpPostgres(store, { packet, entity, archivePath: path, file: null });
  };
  /** The index's rows of `range` beside the jsonb path's columns of the same stored lines. */
  const compared = async ([first, last]: [number, number]) =>
    (
      await store.pool.query({
        text: `SELECT s.id, ARRAY[s.name, s.sort_name, s.aliases, s.disambiguation] AS staged,
            ARRAY[${FIELD_COLUMNS_PG}] AS parsed
          FROM search_index s JOIN changes c ON c.id = s.id ${PARSED_LINE}
          WHERE s.id BETWEEN $1 AND $2 ORDER BY s.id`,
        values: [first, last],
      })
    ).rows as { id: number; staged: (string | null)[]; parsed: (string | null)[] }[];
  const columnsOf = async (packet: number, entity: 'work' | 'artist', position: number) =>
    (await compared([changeId(packet, entity, position), changeId(packet, entity, position)]))[0]?.staged;

  beforeAll(async () => {
    dir = await tempDir('pg-search-stage-');
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('search_stage');
    store = await openPostgresStore({ connectionString: url, display: 'search_stage' });
    await ingest(30, 'work', WORKS);
    await ingest(30, 'artist', ARTISTS);
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
    await dir?.cleanup();
  });

  it('indexes the columns the jsonb path reads, for every line of every shape', async () => {
    const works = await compared(dumpIdRange(30, 'work'));
    const artists = await compared(dumpIdRange(30, 'artist'));
    // One entry per MBID (line 1's MBID appears twice: its later line only).
    expect(works).toHaveLength(WORKS.length - 1);
    expect(artists).toHaveLength(ARTISTS.length);
    for (const row of [...works, ...artists]) expect(row.staged, `change ${row.id}`).toEqual(row.parsed);
    expect(works.map((row) => row.id)).not.toContain(changeId(30, 'work', 1));
  });

  it('keeps escapes, quotes, control characters and COPY text markers as text', async () => {
    expect(await columnsOf(30, 'work', 3)).toEqual([
      'Escaped é "quoted" back\\slash / solidus',
      null,
      null,
      null,
    ]);
    expect(await columnsOf(30, 'work', 7)).toEqual(['New\nline\ttab\rcr', '\\N', null, '\\.']);
    expect(await columnsOf(30, 'work', 8)).toEqual(['control \u0001 \u0002 \u001f', '', null, null]);
    expect((await columnsOf(30, 'work', 11))?.[2]).toBe(
      'Same Name Sort, Name Only name Only sort  Tab\there',
    );
    expect(await columnsOf(30, 'work', 17)).toEqual(['Plain Title, later line', null, null, null]);
    expect(await columnsOf(30, 'artist', 1)).toEqual(['Artist Name', 'Name, Artist', null, null]);
    expect(await columnsOf(30, 'artist', 3)).toEqual(['Ænima', 'Ænima', null, null]);
  });

  it('reads in SQL what jsonb reads otherwise: NUL and surrogate escapes, non-string values', async () => {
    // jsonb refuses \u0000 and surrogate escapes: the line is read with spaces in their place.
    expect((await columnsOf(30, 'work', 4))?.slice(0, 1)).toEqual(['Pair    escaped']);
    expect((await columnsOf(30, 'work', 5))?.[0]).toBe('Nul Byte');
    expect((await columnsOf(30, 'work', 14))?.[2]).toBe('Émile "E"  ');
    expect(await columnsOf(30, 'work', 9)).toEqual(['42', 'Number title', null, null]);
    expect(await columnsOf(30, 'work', 15)).toEqual(['1', '0', null, '1.5']);
    expect((await columnsOf(30, 'work', 18))?.[0]).toBe('raw\u0001control');
  });

  it('stores the dump again with the same index', async () => {
    const before = await compared(dumpIdRange(30, 'work'));
    await ingest(30, 'work', WORKS);
    expect(await compared(dumpIdRange(30, 'work'))).toEqual(before);
  });
});

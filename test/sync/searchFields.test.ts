import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { FIELD_COLUMNS, TITLED_ENTITY_TYPES } from '../../src/db/searchIndex.js';
import { MEMBER_SPANS, mbidOffset, SPANNED_MEMBERS } from '../../src/sync/lineScan.js';
import { lineNameOf, searchFieldsOf } from '../../src/sync/searchFields.js';

const SAMPLES = fileURLToPath(new URL('../../fixtures/samples/', import.meta.url));
const ID = '0383dadf-2a4e-4d10-a46a-e9e041da8eb3';

// SQLite reads the columns as the migration's fill and the rare lines of the slow path do.
const sqlite = new Database(':memory:');
const bySql = sqlite
  .prepare(`SELECT ${FIELD_COLUMNS} FROM (SELECT ? AS entity, CAST(? AS TEXT) AS data) c`)
  .raw();
afterAll(() => sqlite.close());

/** The columns read in JS from the one-pass check's spans; undefined when JS leaves the line to SQLite. */
function byJs(entity: string, text: string) {
  const line = Buffer.from(text);
  const spans = new Int32Array(MEMBER_SPANS);
  expect(mbidOffset(line, spans)).toBeGreaterThanOrEqual(0);
  return searchFieldsOf(line, spans, (TITLED_ENTITY_TYPES as readonly string[]).includes(entity));
}

describe('search index columns read in JS during the ingest', () => {
  const files = readdirSync(SAMPLES).filter((f) => f.endsWith('.jsonl'));

  it('equal what SQLite reads from every sample line of every entity type', () => {
    let lines = 0;
    let withAliases = 0;
    for (const file of files) {
      const entity = file.replace('.jsonl', '');
      for (const text of readFileSync(SAMPLES + file, 'utf8')
        .split('\n')
        .filter(Boolean)) {
        const fields = byJs(entity, text);
        expect(fields, `${file}: JS leaves a real line to SQLite`).toBeDefined();
        expect(fields).toEqual(bySql.get(entity, text));
        lines++;
        if (fields![2] !== null) withAliases++;
      }
    }
    expect(files.length).toBeGreaterThanOrEqual(7);
    expect(lines).toBeGreaterThan(20);
    expect(withAliases).toBeGreaterThan(0);
  });

  const cases: [string, Record<string, unknown> | string][] = [
    ['escapes and non-ASCII', { name: 'Gro\\u00dfe "Bo\u00eete"\\n', 'sort-name': 'B\u00f6ite, Gro\u00dfe' }],
    ['null and missing members', { name: null, disambiguation: null }],
    ['empty strings', { name: '', 'sort-name': '', disambiguation: '' }],
    [
      'aliases: equal, differing, missing and null sort names; non-objects skipped',
      {
        name: 'A',
        aliases: [
          { name: 'x', 'sort-name': 'x' },
          { name: 'y', 'sort-name': 'Y, the' },
          { name: 'z' },
          { 'sort-name': 'only sort' },
          { name: null, 'sort-name': null },
          'not an object',
          ['nor', 'this'],
          null,
          { name: '', 'sort-name': '' },
        ],
      },
    ],
    ['aliases empty', { name: 'A', aliases: [] }],
    ['aliases not an array', { name: 'A', aliases: { name: 'x' } }],
    ['aliases of no object', { name: 'A', aliases: [1, 'two'] }],
  ];
  for (const [what, members] of cases) {
    it(`equal SQLite's for ${what}`, () => {
      const text = typeof members === 'string' ? members : JSON.stringify({ id: ID, ...members });
      for (const entity of ['artist', 'recording']) {
        const fields = byJs(entity, text.replaceAll('\\\\u', '\\u'));
        expect(fields).toEqual(bySql.get(entity, text.replaceAll('\\\\u', '\\u')));
      }
    });
  }

  it('leave a line to SQLite when a member holds a number, a boolean or an object', () => {
    const lines: [string, Record<string, unknown>][] = [
      ['artist', { name: 5 }],
      ['recording', { title: true }],
      ['recording', { disambiguation: { text: 'x' } }],
      ['artist', { aliases: [{ name: 1 }] }],
    ];
    for (const [entity, members] of lines) {
      expect(byJs(entity, JSON.stringify({ id: ID, ...members }))).toBeUndefined();
    }
  });

  it('locate each member at the top level only, and refuse a member given twice', () => {
    const text = `{"name" : "A" , "id":"${ID}","relations":[{"name":"inner"}],"aliases":[{"name":"x"}] }`;
    const line = Buffer.from(text);
    const spans = new Int32Array(MEMBER_SPANS);
    expect(mbidOffset(line, spans)).toBeGreaterThan(0);
    const at = (member: (typeof SPANNED_MEMBERS)[number]) => {
      const k = 2 * SPANNED_MEMBERS.indexOf(member);
      return spans[k]! < 0 ? null : text.slice(spans[k]!, spans[k + 1]!);
    };
    expect(at('name')).toBe('"A"');
    expect(at('aliases')).toBe('[{"name":"x"}]');
    expect(at('title')).toBeNull();
    expect(mbidOffset(Buffer.from(`{"id":"${ID}","name":"a","name":"b"}`), spans)).toBe(-1);
    // Without spans, a repeated member is JSON.parse's business: the fast path accepts it.
    expect(mbidOffset(Buffer.from(`{"id":"${ID}","name":"a","name":"b"}`))).toBeGreaterThan(0);
  });
});

describe('lineNameOf: the name stored with each line (changes.name)', () => {
  // The contract: EntityChange.name, `name ?? title` when that is a string, else null.
  const byParse = (text: string) => {
    const json = JSON.parse(text) as { name?: unknown; title?: unknown };
    const name = json.name ?? json.title;
    return typeof name === 'string' ? name : null;
  };
  const byJs = (text: string) => {
    const line = Buffer.from(text);
    const spans = new Int32Array(MEMBER_SPANS);
    expect(mbidOffset(line, spans)).toBeGreaterThanOrEqual(0);
    return lineNameOf(line, spans);
  };

  it('equals EntityChange.name for every sample line', () => {
    const files = readdirSync(SAMPLES).filter((f) => f.endsWith('.jsonl'));
    const names = new Set<string | null>();
    for (const file of files) {
      for (const text of readFileSync(SAMPLES + file, 'utf8')
        .split('\n')
        .filter(Boolean)) {
        expect(byJs(text), file).toBe(byParse(text));
        names.add(byJs(text));
      }
    }
    expect(names.size).toBeGreaterThan(20);
    expect(names.has(null)).toBe(false);
  });

  const cases: [string, Record<string, unknown>, string | null][] = [
    ['a name', { name: 'Gro\u00dfe "Bo\u00eete"\\n', title: 'T' }, 'Große "Boîte"\\n'],
    ['a title', { title: 'Only a title' }, 'Only a title'],
    ['a null name, then the title', { name: null, title: 'Odd Title' }, 'Odd Title'],
    ['an empty name', { name: '', title: 'T' }, ''],
    ['a number as name: no name, the title is not used', { name: 42, title: 'T' }, null],
    ['a title that is no string', { title: ['x'] }, null],
    ['neither', { disambiguation: 'd' }, null],
  ];
  for (const [what, members, expected] of cases) {
    it(`equals EntityChange.name for ${what}`, () => {
      const text = JSON.stringify({ id: ID, ...members });
      expect(byJs(text)).toBe(expected);
      expect(byParse(text)).toBe(expected);
    });
  }
});

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../src/db/postgres/client.js';
import { foldSearchText, foldSearchValue, SEARCH_FOLD_RULES } from '../../src/db/searchFold.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../support/postgres.js';

describe('foldSearchText', () => {
  it('spells out the letters unicode61 keeps as unaccent does', () => {
    expect(foldSearchText('Røyksopp Łódź MØ Straße STRAẞE Æther Œuvre Đorđe Þór ﬁne ﬂ ﬀ ﬃ ﬄ')).toBe(
      'Royksopp Lódź MO Strasse STRASSE AEther OEuvre Dorde THór fine fl ff ffi ffl',
    );
    expect(foldSearchText('ı Ħħ Ŧŧ Ŀŀ Ðð þ æ œ ø ł đ')).toBe('i Hh Tt Ll Dd th ae oe o l d');
  });

  it('returns text without such letters as it is, and other values unchanged', () => {
    const text = 'Grosse Boîte, Björk';
    expect(foldSearchText(text)).toBe(text);
    expect(foldSearchValue(null)).toBeNull();
    expect(foldSearchValue(42)).toBe(42);
  });
});

/** The words FTS5's `unicode61 remove_diacritics 2` makes of each text, joined by spaces. */
function unicode61Words(texts: string[]): string[] {
  const db = new Database(':memory:');
  try {
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')`);
    const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)');
    for (const [i, text] of texts.entries()) insert.run(i + 1, text);
    const words = texts.map(() => [] as string[]);
    const rows = db.prepare('SELECT doc, term FROM v ORDER BY doc, offset').all() as {
      doc: number;
      term: string;
    }[];
    for (const { doc, term } of rows) words[doc - 1]!.push(term);
    return words.map((w) => w.join(' '));
  } finally {
    db.close();
  }
}

describePostgres('the fold is PostgreSQL’s unaccent for the letters unicode61 keeps', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('search_fold');
    store = await openPostgresStore({ connectionString: url, display: 'search_fold' });
  });
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  const unaccent = async (texts: string[]) => {
    const { rows } = await store.pool.query<{ u: string }>(
      'SELECT livefeed_unaccent(t) AS u FROM unnest($1::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n',
      [texts],
    );
    return rows.map((row) => row.u);
  };

  it('holds exactly the letters of the BMP that unaccent changes and unicode61 does not fold alike', async () => {
    const letters: string[] = [];
    for (let code = 0; code < 0x10000; code++) {
      const letter = String.fromCharCode(code);
      if (/^\p{L}$/u.test(letter)) letters.push(letter);
    }
    const spelt = await unaccent(letters);
    const changed = letters.flatMap((letter, i) => (spelt[i] === letter ? [] : [[letter, spelt[i]!]]));
    const words = unicode61Words(changed.map(([letter]) => letter!));
    const expected = changed.filter(([, target], i) => words[i] !== target!.toLowerCase());
    expect([...SEARCH_FOLD_RULES]).toEqual(expected);
  });

  it('a folded query means to unaccent what the query meant: PostgreSQL answers the same', async () => {
    const sources = [...SEARCH_FOLD_RULES.keys()];
    const [plain, folded] = await Promise.all([unaccent(sources), unaccent(sources.map(foldSearchText))]);
    expect(folded).toEqual(plain);
  });
});

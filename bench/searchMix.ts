/**
 * The requests of the `search` benchmark (bench/search.ts, issue 15), built from the names in the
 * database under test so that they find what a user would find there: whole words, prefixes as a
 * user types them (2, 3 and 4 letters), a word typed after a whole one, diacritics folded and as
 * written, entity type filters, second pages (`after`) and a typo that finds nothing; and, timed
 * alone, whole words of five letters or more sent without a space (prefixes with no index).
 */
import type Database from 'better-sqlite3';
import { TITLED_ENTITY_TYPES } from '../src/db/searchIndex.js';
import { ENTITY_TYPES, type EntityType } from '../src/feed/entities.js';

/** One request of the mix: the `search` arguments and what it stands for. */
export interface SearchCase {
  label: string;
  query: string;
  entities?: string[];
  /** Asks for the second page: `after` is filled in by {@link withSecondPages}. */
  secondPage?: boolean;
  /** Timed alone only, not part of the load mix. */
  aloneOnly?: boolean;
  after?: string;
}

/** The GraphQL document every case sends: a page of 20 as a search box shows it. */
export const SEARCH_DOCUMENT = `query($q: String!, $e: [EntityType!], $after: String) {
  search(query: $q, entities: $e, first: 20, after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { score node { mbid type latest { name } } }
  }
}`;

/** The request body of a case (JSON text). */
export function searchBody(c: SearchCase): string {
  return JSON.stringify({
    query: SEARCH_DOCUMENT,
    variables: { q: c.query, e: c.entities ?? null, after: c.after ?? null },
  });
}

/** Words as FTS5's unicode61 tokenizer splits them: runs of letters and digits. */
const wordsOf = (name: string) => name.match(/[\p{L}\p{N}]+/gu) ?? [];
/** A word without its diacritics, as `remove_diacritics 2` folds it. */
const folded = (word: string) => word.normalize('NFD').replace(/\p{M}/gu, '');

/** GraphQL name of an entity type (`release-group` → `RELEASE_GROUP`). */
const enumName = (entity: EntityType) => entity.toUpperCase().replaceAll('-', '_');

/**
 * Names (with their entity types) of `count` entities spread evenly over the search index, in
 * rowid order.
 */
export function sampleNames(
  sqlite: Database.Database,
  count: number,
): { name: string; entity: EntityType }[] {
  const titled = TITLED_ENTITY_TYPES.map((t) => `'${t}'`).join(', ');
  // The rowids of the index read from its docsize table (FTS5's, one row per entry): a seek
  // there costs microseconds where a rowid range over the contentless table scans it.
  const [low, high] = ['ASC', 'DESC'].map(
    (order) =>
      sqlite.prepare(`SELECT id FROM search_index_docsize ORDER BY id ${order} LIMIT 1`).pluck().get() as
        | number
        | undefined,
  );
  if (low === undefined || high === undefined) return [];
  const at = sqlite.prepare(
    `SELECT c.entity, json_extract(c.data, iif(c.entity IN (${titled}), '$.title', '$.name')) AS name
     FROM changes c WHERE c.id = (SELECT id FROM search_index_docsize WHERE id >= ? ORDER BY id LIMIT 1)`,
  );
  const names: { name: string; entity: EntityType }[] = [];
  for (let i = 0; i < count; i++) {
    const row = at.get(Math.round(low + ((high - low) * i) / Math.max(1, count - 1))) as
      | { entity: EntityType; name: string | null }
      | undefined;
    if (row?.name) names.push({ name: row.name, entity: row.entity });
  }
  return names;
}

/**
 * The mix of search requests made from `names` (see the module comment), each taken from another
 * name where the names allow it. Cases the names cannot give (no word with diacritics) are left out.
 */
export function searchCases(names: { name: string; entity: EntityType }[]): SearchCase[] {
  let turn = 0;
  // The next name, in turn, that passes `test`.
  const next = (test: (words: string[]) => boolean) => {
    for (let i = 0; i < names.length; i++) {
      const candidate = names[(turn + i) % names.length]!;
      if (test(wordsOf(candidate.name))) {
        turn = (turn + i + 1) % names.length;
        return { words: wordsOf(candidate.name), entity: candidate.entity };
      }
    }
    return undefined;
  };
  const long = (w: string) => [...w].length >= 4;
  const cases: SearchCase[] = [];
  const add = (c: SearchCase) => cases.push(c);
  // A first page, then its second page right after it, as a user asks for them.
  const addPages = (c: SearchCase) => {
    add(c);
    add({ ...c, label: `${c.label}, second page`, secondPage: true });
  };
  // Whole words end with a space, as the box sends them once the next key is a space: the word
  // itself, not a prefix (a prefix of five letters or more is measured on its own, below).
  const one = next((w) => w.some(long));
  const word = one?.words.find(long);
  if (one && word) {
    add({ label: 'a whole word', query: `${word.toLowerCase()} ` });
    const other = ENTITY_TYPES.find((e) => e !== one.entity)!;
    add({ label: 'a word, one entity type', query: `${word} `, entities: [enumName(one.entity)] });
    add({
      label: 'a word, two entity types',
      query: `${word} `,
      entities: [enumName(one.entity), enumName(other)],
    });
    const typo = [...word];
    typo[typo.length >> 1] = typo[typo.length >> 1] === 'x' ? 'q' : 'x';
    add({ label: 'a typo (finds nothing)', query: `${typo.join('')} ` });
  }
  for (const letters of [2, 3, 4]) {
    const typed = next((w) => w.some(long))?.words.find(long);
    if (typed) {
      const query = [...typed.toLowerCase()].slice(0, letters).join('');
      (letters === 3 ? addPages : add)({ label: `typing: ${letters} letters`, query });
    }
  }
  const two = next((w) => w.length >= 2);
  if (two) {
    addPages({ label: 'two whole words', query: `${two.words.slice(0, 2).join(' ')} ` });
    const second = [...two.words[1]!].slice(0, 2).join('');
    add({ label: 'a word, then 2 letters typed', query: `${two.words[0]} ${second}` });
  }
  const marked = next((w) => w.some((x) => folded(x) !== x));
  const accented = marked?.words.find((x) => folded(x) !== x);
  if (accented) {
    add({ label: 'diacritics left out', query: `${folded(accented).toLowerCase()} ` });
    add({ label: 'diacritics as written', query: `${accented} ` });
  }
  // A whole word without its space is a prefix of its length: without a prefix index of that
  // length FTS5 merges the entries of every word it begins. Timed alone, not in the load mix.
  const five = (w: string) => [...w].length >= 5;
  const full = next((w) => w.some(five))?.words.find(five);
  if (full)
    add({ label: 'a word of 5+ letters typed out, no space (alone only)', query: full, aloneOnly: true });
  const pair = next((w) => w.length >= 2 && five(w[1]!));
  if (pair) {
    const query = pair.words.slice(0, 2).join(' ');
    add({ label: 'two words typed out, no space (alone only)', query, aloneOnly: true });
  }
  return cases;
}

/**
 * `cases` with the `after` of each second page set to the `endCursor` of its first page, asked of
 * the server at `url`. A case whose first page is the last is kept as a first page.
 * @throws Error when the server answers with errors.
 */
export async function withSecondPages(url: string, cases: SearchCase[]): Promise<SearchCase[]> {
  const out: SearchCase[] = [];
  for (const c of cases) {
    if (!c.secondPage) {
      out.push(c);
      continue;
    }
    const answer = (await (
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: searchBody({ ...c, after: undefined }),
      })
    ).json()) as { errors?: unknown; data?: { search: { pageInfo: { endCursor: string | null } } } };
    if (answer.errors) throw new Error(`search ${JSON.stringify(c.query)}: ${JSON.stringify(answer.errors)}`);
    const after = answer.data?.search.pageInfo.endCursor ?? undefined;
    out.push(
      after ? { ...c, after } : { ...c, label: c.label.replace(', second page', ''), secondPage: false },
    );
  }
  return out;
}

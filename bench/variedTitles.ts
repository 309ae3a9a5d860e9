/**
 * A fairer database for the `search` benchmark (bench/search.ts): the bootstrap benchmark's lines
 * are the eight sample recordings repeated with fresh MBIDs (bench/bootstrapInput.ts), so its 1M
 * entities have seven distinct titles and every search matches 125,000 to 500,000 of them or
 * none. `tsx bench/variedTitles.ts SOURCE DEST` copies SOURCE to DEST and gives every entity there
 * a generated title: one to five words drawn with Zipf's law (as words in real titles are) from
 * 50,000 made-up words of one to four syllables, some with diacritics, so that a few words are
 * in several percent of the titles, most in a handful. The rest of each line is kept; the search
 * index is filled again by the search migration. Deterministic: the same DEST every time.
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { MIGRATIONS_FOLDER, openStore } from '../src/db/client.js';

const VOCABULARY = 50_000;
const ONSETS = ['', 'b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z'];
const CLUSTERS = ['br', 'ch', 'st', 'tr', 'sh', 'kl', 'gr', 'pl'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'i', 'o', 'y'];
const MARKED = ['é', 'ü', 'ö', 'á', 'ø', 'ñ', 'ç', 'å'];
const CODAS = ['', '', '', 'n', 'r', 's', 'l', 'm', 'k', 't'];

/** mulberry32: a small seeded generator, so that the titles are the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The made-up words, most frequent first (distinct). */
function vocabulary(next: () => number): string[] {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    const syllables = 1 + Math.floor(next() * next() * 4);
    let word = '';
    for (let s = 0; s < syllables; s++) {
      const onset = next() < 0.1 ? pick(CLUSTERS) : pick(ONSETS);
      const vowel = next() < 0.06 ? pick(MARKED) : pick(VOWELS);
      word += onset + vowel + (s === syllables - 1 ? pick(CODAS) : '');
    }
    if ([...word].length >= 2) words.add(word);
  }
  return [...words];
}

/** A title generator: Zipf-Mandelbrot ranks (s = 1, q = 2.7) over the vocabulary. */
export function titleMaker(seed = 15): () => string {
  const next = random(seed);
  const words = vocabulary(next);
  const cumulative: number[] = [];
  let total = 0;
  for (let r = 1; r <= words.length; r++) {
    total += 1 / (r + 2.7);
    cumulative.push(total);
  }
  const word = () => {
    const x = next() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    const w = words[lo]!;
    return next() < 0.7 ? w[0]!.toUpperCase() + w.slice(1) : w;
  };
  const lengths = [1, 1, 1, 2, 2, 2, 3, 3, 4, 5];
  return () => Array.from({ length: lengths[Math.floor(next() * lengths.length)]! }, word).join(' ');
}

/**
 * Copies `source` to `dest` and rewrites every line's `title` (or `name`) there, then fills the
 * search index again. Logs its steps.
 * @throws Error when `dest` exists (never overwritten) or `source` is not a livefeed database.
 */
export function writeVariedTitles(source: string, dest: string, log: (text: string) => void): void {
  if (existsSync(dest)) throw new Error(`${dest} exists; remove it first`);
  copyFileSync(source, dest);
  const db = new Database(dest);
  const title = titleMaker();
  db.function('varied_title', { deterministic: false }, () => title());
  const started = Date.now();
  const changed = db
    .prepare(
      `UPDATE changes SET data = json_set(data, iif(json_type(data, '$.title') IS NULL, '$.name', '$.title'), varied_title())`,
    )
    .run().changes;
  log(`${changed} titles rewritten in ${Math.round((Date.now() - started) / 1000)} s`);
  // The index is made again by the migration that last made it (drizzle/*_search_prefixes.sql),
  // run again when the database is next opened, as for a database of an earlier version.
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string; when: number }[];
  };
  const remake = journal.entries.find((e) => e.tag.endsWith('_search_prefixes'));
  if (!remake) throw new Error('no search_prefixes migration in drizzle/');
  db.prepare('DELETE FROM __drizzle_migrations WHERE created_at >= ?').run(remake.when);
  db.close();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [source, dest] = process.argv.slice(2);
  if (!source || !dest) throw new Error('usage: tsx bench/variedTitles.ts SOURCE DEST');
  writeVariedTitles(source, dest, (text) => process.stderr.write(`${text}\n`));
  const started = Date.now();
  openStore(dest).close();
  process.stderr.write(`search index filled in ${Math.round((Date.now() - started) / 1000)} s\n`);
}

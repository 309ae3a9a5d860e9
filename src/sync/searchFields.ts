import type { SearchFields } from '../db/searchIndex.js';
import { SPANNED_MEMBERS } from './lineScan.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;

const span = (name: (typeof SPANNED_MEMBERS)[number]) => 2 * SPANNED_MEMBERS.indexOf(name);
const NAME = span('name');
const TITLE = span('title');
const SORT_NAME = span('sort-name');
const DISAMBIGUATION = span('disambiguation');
const ALIASES = span('aliases');

/** Marks a member whose value the JS path does not read as SQLite would (a number, a boolean, an object). */
const UNREAD = Symbol('unread');

/**
 * The search index's columns of one JSON dump line (db/searchIndex.ts, `FIELD_COLUMNS`) from the
 * member spans the ingest's one-pass check found (`mbidOffset` with spans, sync/lineScan.ts), without
 * parsing the line again: the name (`title` when `titled`, else `name`), `sort-name`,
 * `disambiguation`, and the aliases' names and differing sort names joined by spaces. Values are
 * the ones SQLite's JSON functions give. Undefined when a member holds something other than a
 * string or null (or an alias's name or sort name does): the caller then has SQLite read that
 * line, so the index is the same either way. Replaces re-reading and re-parsing each stored line
 * in SQL, which was most of the search index's ingest cost (bench/RESULTS.md).
 */
export function searchFieldsOf(line: Buffer, spans: Int32Array, titled: boolean): SearchFields | undefined {
  const name = stringMember(line, spans, titled ? TITLE : NAME);
  const sortName = stringMember(line, spans, SORT_NAME);
  const disambiguation = stringMember(line, spans, DISAMBIGUATION);
  const aliases = aliasesMember(line, spans);
  if (name === UNREAD || sortName === UNREAD || disambiguation === UNREAD || aliases === UNREAD)
    return undefined;
  return [name, sortName, aliases, disambiguation];
}

/**
 * The line's name as `EntityChange.name` and SQL's LINE_NAME give it (db/searchQueries.ts): `name`
 * when a string, else `title` when `name` is null or absent and `title` a string, else null. For
 * the `changes.name` column (drizzle/sqlite/0011_change_names.sql).
 */
export function lineNameOf(line: Buffer, spans: Int32Array): string | null {
  const name = stringMember(line, spans, NAME);
  if (typeof name === 'string') return name;
  if (name === UNREAD) return null;
  const title = stringMember(line, spans, TITLE);
  return typeof title === 'string' ? title : null;
}

/** The string value of the member at span `k`: null when absent or JSON null. */
function stringMember(line: Buffer, spans: Int32Array, k: number): string | null | typeof UNREAD {
  const start = spans[k]!;
  if (start < 0) return null;
  const end = spans[k + 1]!;
  const first = line[start];
  if (first === QUOTE) {
    // Without escapes the bytes between the quotes are the text (the line was checked as UTF-8).
    return hasEscape(line, start + 1, end - 1)
      ? (JSON.parse(line.toString('utf8', start, end)) as string)
      : line.toString('utf8', start + 1, end - 1);
  }
  return first === 0x6e ? null : UNREAD;
}

function hasEscape(line: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (line[i] === BACKSLASH) return true;
  return false;
}

/** One alias's `name` or `sort-name` as SQLite's `->>` gives it (strings and null only). */
function aliasPart(value: unknown): string | null | typeof UNREAD {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : UNREAD;
}

/**
 * The aliases column: for each object of the `aliases` array, its name, followed by its sort name
 * when that differs; joined by spaces; null when there is no such alias (SQL: group_concat over
 * json_each, db/searchIndex.ts).
 */
function aliasesMember(line: Buffer, spans: Int32Array): string | null | typeof UNREAD {
  const start = spans[ALIASES]!;
  if (start < 0 || line[start] !== OPEN_ARRAY) return null;
  const aliases = JSON.parse(line.toString('utf8', start, spans[ALIASES + 1]!)) as unknown[];
  const parts: string[] = [];
  for (const alias of aliases) {
    if (typeof alias !== 'object' || alias === null || Array.isArray(alias)) continue;
    const name = aliasPart((alias as Record<string, unknown>).name);
    const sortName = aliasPart((alias as Record<string, unknown>)['sort-name']);
    if (name === UNREAD || sortName === UNREAD) return UNREAD;
    if (name === sortName) {
      if (name !== null) parts.push(name);
    } else parts.push(name === null ? sortName! : sortName === null ? name : `${name} ${sortName}`);
  }
  return parts.length === 0 ? null : parts.join(' ');
}

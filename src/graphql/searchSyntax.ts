import { createHash } from 'node:crypto';
import type { GraphQLError } from 'graphql';
import { foldSearchText } from '../db/searchFold.js';
import type { SearchFilter, SearchKey } from '../db/searchQueries.js';
import { badCursor } from './connection.js';
import { userError } from './errors.js';

/** Most characters of a `search` query. */
export const MAX_QUERY_LENGTH = 200;
/** Most words and phrases of a `search` query. */
export const MAX_QUERY_TERMS = 16;

// A phrase in double quotes (the closing quote may still be missing while typing), or a word: a run
// of anything but white space and double quotes.
const TERM = /"([^"]*)("?)|([^\s"]+)/gu;
// FTS5's unicode61 tokenizer keeps letters, numbers and private-use characters; a term without any
// of them has no token and would match nothing, so it is dropped (`-`, `*`, `&`).
const TOKEN_CHAR = /[\p{L}\p{N}\p{Co}]/u;

/** Code points of `text` (its length is bounded by the request body limit). */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function queryError(message: string): GraphQLError {
  return userError('BAD_USER_INPUT', message, { argument: 'query' });
}

/**
 * The FTS5 phrases of a user's `search` query (README, Search), all of which must match (AND): every
 * word and every "quoted phrase", each written as an FTS5 string, so nothing the user types is
 * FTS5 syntax (`NEAR`, `OR`, `-`, `*`, `:` and `^` match as text). The last term matches as a prefix
 * (search as you type: `"moun"*`) when it is a plain word and the query does not end in white space.
 * Letters unicode61 keeps but PostgreSQL's unaccent spells out are spelt out (`"royksopp"` for
 * "røyksopp"), as in the SQLite index.
 * @throws GraphQLError BAD_USER_INPUT (extensions.argument `query`) for a query without a word, or
 *   longer than {@link MAX_QUERY_LENGTH} characters or {@link MAX_QUERY_TERMS} terms.
 */
export function searchPhrases(query: string): string[] {
  // Characters as a user counts them (code points: an emoji is one), not UTF-16 units.
  const length = query.length <= MAX_QUERY_LENGTH ? query.length : codePoints(query);
  if (length > MAX_QUERY_LENGTH) {
    throw queryError(`"query" has ${length} characters; at most ${MAX_QUERY_LENGTH} are allowed`);
  }
  const terms: { text: string; phrase: boolean }[] = [];
  for (const match of query.matchAll(TERM)) {
    const phrase = match[1] !== undefined;
    // Folded as the SQLite index is (db/searchFold.ts), before FTS5 escaping: "røyk" is "royk"*.
    // PostgreSQL's unaccent gives the same text for either, so its answers do not change.
    const text = foldSearchText(phrase ? match[1]! : match[3]!);
    if (TOKEN_CHAR.test(text)) terms.push({ text, phrase: phrase && match[2] === '"' });
  }
  if (terms.length === 0) {
    throw queryError('"query" has no word to search for: give at least one letter or digit');
  }
  if (terms.length > MAX_QUERY_TERMS) {
    throw queryError(`"query" has ${terms.length} words; at most ${MAX_QUERY_TERMS} are allowed`);
  }
  const last = terms.length - 1;
  const prefix = !terms[last]!.phrase && !/\s$/u.test(query);
  return terms.map(({ text }, i) => `"${text.replaceAll('"', '""')}"${prefix && i === last ? '*' : ''}`);
}

/**
 * Hash of a search (its phrases and entity filter) that binds its cursors to it: 16 hex
 * digits. Computed once per request and passed to {@link encodeSearchCursor} / {@link decodeSearchCursor}.
 */
export function searchIdentity(filter: SearchFilter): string {
  // Lower case: the index matches either case, so "S" and "s" are one search with one cursor.
  const scope = JSON.stringify([filter.phrases.join(' ').toLowerCase(), filter.slots]);
  return createHash('sha256').update(scope).digest('hex').slice(0, 16);
}

/** Opaque cursor of the hit `key` of the search whose {@link searchIdentity} is `identity`. */
export function encodeSearchCursor(identity: string, key: SearchKey): string {
  return Buffer.from(`search:${identity}:${key.bm25}:${key.id}`).toString('base64url');
}

/**
 * The hit a cursor of the same search (query and entities) points at; undefined when absent or empty.
 * @throws GraphQLError BAD_CURSOR for a cursor of another connection or another search, or garbage.
 */
export function decodeSearchCursor(
  identity: string,
  cursor: string | null | undefined,
): SearchKey | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^search:([0-9a-f]{16}):([^:]+):(\d+)$/.exec(text);
  const bm25 = Number(match?.[2]);
  const id = Number(match?.[3]);
  if (!match || match[1] !== identity || !Number.isFinite(bm25) || !Number.isSafeInteger(id)) {
    throw badCursor(cursor);
  }
  return { bm25, id };
}

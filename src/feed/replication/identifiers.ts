/**
 * Table names and PostgreSQL array text as replication packets write them (FEED.md, Replication
 * packet archives).
 */

/** Schema assumed when a table name has none (very old v1 packets, built without schemas). */
const DEFAULT_SCHEMA = 'musicbrainz';

/**
 * Reads a dotted name of plain or double-quoted identifiers (`musicbrainz.artist`,
 * `"musicbrainz"."artist"`, `"odd""name"`), returning the unquoted parts.
 * @throws Error quoting the text when it is malformed.
 */
function identifierParts(text: string): string[] {
  const parts: string[] = [];
  let i = 0;
  const fail = (): never => {
    throw new Error(`malformed table name ${JSON.stringify(text)}`);
  };
  while (i < text.length) {
    let part = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) fail();
        if (text[i] === '"') {
          if (text[i + 1] !== '"') break;
          i++;
        }
        part += text[i++];
      }
      i++;
    } else {
      const end = text.indexOf('.', i);
      part = text.slice(i, end < 0 ? text.length : end);
      i += part.length;
      if (part === '' || part.includes('"')) fail();
    }
    parts.push(part);
    if (i < text.length) {
      if (text[i] !== '.') fail();
      i++;
      if (i === text.length) fail();
    }
  }
  return parts;
}

/**
 * Normalises a packet's table name to unquoted `schema.table`: `"musicbrainz"."artist"` and
 * `musicbrainz.artist` both give `musicbrainz.artist`; a bare `artist` gets schema `musicbrainz`.
 * @throws Error quoting the name when it is empty, malformed or has more than two parts.
 */
export function parseTableName(text: string): string {
  const parts = identifierParts(text);
  if (parts.length === 1) return `${DEFAULT_SCHEMA}.${parts[0]}`;
  if (parts.length !== 2) throw new Error(`malformed table name ${JSON.stringify(text)}`);
  return `${parts[0]}.${parts[1]}`;
}

/**
 * Parses a one-dimensional PostgreSQL text array, e.g. `{id}` or `{"a b",c}` (the `pending_keys`
 * column list): elements may be double-quoted with `\` escapes; unquoted `NULL` is not allowed
 * (key columns are never null).
 * @throws Error quoting the text when it is not such an array.
 */
export function parsePgTextArray(text: string): string[] {
  if (!text.startsWith('{') || !text.endsWith('}')) throw new Error(`not an array: ${JSON.stringify(text)}`);
  const body = text.slice(1, -1);
  const items: string[] = [];
  let i = 0;
  const fail = (): never => {
    throw new Error(`malformed array ${JSON.stringify(text)}`);
  };
  while (i < body.length) {
    let item = '';
    if (body[i] === '"') {
      i++;
      while (body[i] !== '"') {
        if (i >= body.length) fail();
        if (body[i] === '\\') i++;
        item += body[i++] ?? '';
      }
      i++;
    } else {
      const end = body.indexOf(',', i);
      item = body.slice(i, end < 0 ? body.length : end).trim();
      i += body.slice(i, end < 0 ? body.length : end).length;
      if (item === '' || item.toUpperCase() === 'NULL' || /["{}\\]/.test(item)) fail();
    }
    items.push(item);
    if (i < body.length) {
      if (body[i] !== ',') fail();
      i++;
      if (i === body.length) fail();
    }
  }
  return items;
}

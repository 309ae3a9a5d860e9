/**
 * The packed row data of v1 `dbmirror_pendingdata` (FEED.md, Replication packet archives):
 * `"col"='value' ` pairs, each followed by one space; `"col"= ` (no quoted value) is NULL.
 */

/**
 * Parses packed v1 row data into column → text value (null for NULL), in column order. Inside
 * quotes `''` and `\'` stand for `'` and `\\` for `\` (dbmirror doubles both; older writers used
 * `\'`); any other backslashed character stands for itself. The space after the last pair may be
 * missing. Apply {@link unescapeCopy} to the COPY column first.
 * @throws Error naming the character offset when the text is not packed data.
 */
export function parsePackedData(text: string): Record<string, string | null> {
  const row: Record<string, string | null> = {};
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`packed data: ${what} at offset ${i} of ${JSON.stringify(text.slice(0, 120))}`);
  };
  while (i < text.length) {
    if (text[i] !== '"') fail('expected "column"');
    const nameEnd = text.indexOf('"', i + 1);
    if (nameEnd < 0) fail('unterminated column name');
    const column = text.slice(i + 1, nameEnd);
    i = nameEnd + 1;
    if (text[i] !== '=') fail('expected =');
    i++;
    if (text[i] === "'") {
      const [value, end] = quotedValue(text, i + 1);
      if (end < 0) fail(`unterminated value of column ${column}`);
      row[column] = value;
      i = end;
    } else {
      row[column] = null;
    }
    if (i < text.length) {
      if (text[i] !== ' ') fail(`expected a space after column ${column}`);
      i++;
    }
  }
  return row;
}

/** Reads a quoted value starting after its opening quote; returns it and the offset after the closing quote (-1: unterminated). */
function quotedValue(text: string, from: number): [string, number] {
  let value = '';
  let i = from;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '\\') {
      if (i + 1 >= text.length) return ['', -1];
      value += text[i + 1];
      i += 2;
    } else if (char === "'") {
      if (text[i + 1] !== "'") return [value, i + 1];
      value += "'";
      i += 2;
    } else {
      // Copy the run up to the next special character at once: values can be long.
      let end = i + 1;
      while (end < text.length && text[end] !== '\\' && text[end] !== "'") end++;
      value += text.slice(i, end);
      i = end;
    }
  }
  return ['', -1];
}

/**
 * Packs a row the way dbmirror does (inverse of {@link parsePackedData}): `"col"='value' ` with `'`
 * and `\` doubled, `"col"= ` for null.
 */
export function packData(row: Record<string, string | null>): string {
  let out = '';
  for (const [column, value] of Object.entries(row)) {
    out += value === null ? `"${column}"= ` : `"${column}"='${value.replace(/['\\]/g, (c) => c + c)}' `;
  }
  return out;
}

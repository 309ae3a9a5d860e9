/**
 * PostgreSQL `COPY ... TO stdout` text format (FEED.md, Replication packet archives): one row a
 * line, columns split by TAB, `\N` is NULL, backslash escapes inside values.
 */

const SIMPLE_ESCAPES: Record<string, string> = {
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

const OCTAL = /^[0-7]{1,3}/;
const HEX = /^x[0-9a-fA-F]{1,2}/;

// Byte escapes (`\ooo`, `\xhh`) name bytes, not characters: a run of them may spell one UTF-8
// character, so they are collected and decoded together; `fatal` turns invalid UTF-8 into an error.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Undoes COPY text escaping of one column value: `\\` `\t` `\n` `\r` `\b` `\f` `\v`, octal `\ooo`
 * and hex `\xhh` byte escapes (decoded as UTF-8), and any other backslashed character standing for
 * itself, as PostgreSQL's COPY FROM does. Does not treat `\N` specially (see {@link splitCopyLine}).
 * @throws Error when the value ends in a lone backslash or byte escapes do not form valid UTF-8.
 */
export function unescapeCopy(value: string): string {
  let next = value.indexOf('\\');
  if (next < 0) return value;
  let out = '';
  let start = 0;
  let bytes: number[] = [];
  const flushBytes = () => {
    if (bytes.length === 0) return;
    try {
      out += utf8.decode(Uint8Array.from(bytes));
    } catch {
      throw new Error(
        `byte escapes do not form valid UTF-8: ${bytes.map((b) => `\\x${b.toString(16)}`).join('')}`,
      );
    }
    bytes = [];
  };
  while (next >= 0) {
    if (next > start) {
      flushBytes();
      out += value.slice(start, next);
    }
    const rest = value.slice(next + 1, next + 4);
    if (rest === '') throw new Error('value ends in a lone backslash');
    const octal = OCTAL.exec(rest);
    const hex = octal ? null : HEX.exec(rest);
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8) & 0xff);
      start = next + 1 + octal[0].length;
    } else if (hex) {
      bytes.push(Number.parseInt(hex[0].slice(1), 16));
      start = next + 1 + hex[0].length;
    } else {
      flushBytes();
      const char = rest[0]!;
      out += SIMPLE_ESCAPES[char] ?? char;
      start = next + 2;
    }
    next = value.indexOf('\\', start);
  }
  if (start < value.length) {
    flushBytes();
    out += value.slice(start);
  }
  flushBytes();
  return out;
}

/**
 * Splits one COPY text line into its column values: TAB-separated, `\N` → null, every other value
 * unescaped with {@link unescapeCopy}. Escaped tabs (`\t`) stay inside their value.
 * @throws Error from {@link unescapeCopy}, naming the 1-based column.
 */
export function splitCopyLine(line: string): (string | null)[] {
  return line.split('\t').map((raw, index) => {
    if (raw === '\\N') return null;
    try {
      return unescapeCopy(raw);
    } catch (error) {
      throw new Error(`column ${index + 1}: ${(error as Error).message}`);
    }
  });
}

/**
 * Escapes `value` for COPY text the way PostgreSQL writes it (`\\`, `\t`, `\n`, `\r`, `\b`, `\f`,
 * `\v`); null becomes `\N`. The inverse of {@link splitCopyLine} for one column.
 */
export function escapeCopy(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r\b\f\v]/g, (char) => ESCAPE_OF[char]!);
}

const ESCAPE_OF: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\b': '\\b',
  '\f': '\\f',
  '\v': '\\v',
};

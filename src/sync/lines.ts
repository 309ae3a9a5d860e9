import { isUtf8 } from 'node:buffer';
import { isMbid } from '../feed/mbid.js';

/** Outcome of {@link diagnoseLine}: a storable (possibly re-escaped) line and its MBID in lower case, or why it is not. */
export type LineDiagnosis = { ok: true; json: string; mbid: string } | { ok: false; reason: string };

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching raw control characters is the point
const HAS_RAW_CONTROL = /[\u0000-\u001f]/;

/** JSON's escape of UTF-16 code unit `code`: `\u000d`. */
const unicodeEscape = (code: number) => `\\u${code.toString(16).padStart(4, '0')}`;

/**
 * `text` with the raw control characters inside its JSON strings escaped (`\u000d`): not allowed
 * raw there, and escaped they keep the same value. Between tokens, TAB, CR and LF are JSON's own
 * whitespace and stay as they are (escaped, they would break the line); any other stays raw too,
 * and the line is refused as not JSON.
 */
function escapeControl(text: string): string {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // After a backslash, the next character is the escape's, whatever it is: skipped.
    if (!inString) inString = c === 0x22;
    else if (c === 0x5c) i++;
    else if (c === 0x22) inString = false;
    else if (c < 0x20) {
      out += `${text.slice(from, i)}${unicodeEscape(c)}`;
      from = i + 1;
    }
  }
  return out + text.slice(from);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching raw control characters is the point
const RAW_CONTROL = /[\u0000-\u001f]/g;

/** `text` with every raw control character written as `\u00XX`. */
function escapeAllControl(text: string): string {
  return text.replace(RAW_CONTROL, (c) => unicodeEscape(c.charCodeAt(0)));
}

function parse(line: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(line) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * Explains a JSON dump line that the fast path refused: not JSON, not an object, no `"id"`, or an
 * invalid MBID. A line that is JSON only once raw control characters are escaped (FEED.md allows raw
 * `\r` in strings) is returned re-escaped: the same JSON value, so nothing is lost.
 */
export function diagnoseLine(line: string): LineDiagnosis {
  if (line.trim() === '') return { ok: false, reason: 'empty line' };
  let parsed = parse(line);
  let json = line;
  if (parsed.error !== undefined && HAS_RAW_CONTROL.test(line)) {
    json = escapeControl(line);
    parsed = parse(json);
  }
  // The parser's message quotes the line: its control characters escaped, the reason stays one
  // printable line (PostgreSQL's text refuses a NUL).
  if (parsed.error !== undefined) return { ok: false, reason: `not JSON: ${escapeAllControl(parsed.error)}` };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  const id = (value as { id?: unknown }).id;
  if (id === undefined) return { ok: false, reason: 'no "id"' };
  if (!isMbid(id)) return { ok: false, reason: `invalid MBID ${JSON.stringify(id).slice(0, 80)}` };
  // Stored and looked up in lower case (GraphQL lower-cases an `mbid` argument); the line stays as written.
  return { ok: true, json, mbid: id.toLowerCase() };
}

/**
 * {@link diagnoseLine} of a line's bytes (without `\n`), with its text. Bytes that are not UTF-8
 * are refused: decoded, they would be stored changed (U+FFFD in their place) and nothing would say
 * so. `text` shows such bytes as U+FFFD (the quarantine keeps it).
 */
export function diagnoseLineBytes(line: Buffer): { text: string; diagnosis: LineDiagnosis } {
  const text = line.toString('utf8');
  if (!isUtf8(line))
    return { text, diagnosis: { ok: false, reason: 'not UTF-8 (its bad bytes shown as U+FFFD)' } };
  return { text, diagnosis: diagnoseLine(text) };
}

const HEX = '[0-9a-fA-F]';
/** SQLite GLOB pattern of a UUID (an MBID). */
export const MBID_GLOB = [8, 4, 4, 4, 12].map((n) => HEX.repeat(n)).join('-');
const MBID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is an MBID (a UUID in canonical text form). */
export function isMbid(value: unknown): value is string {
  return typeof value === 'string' && MBID_PATTERN.test(value);
}

/** Outcome of {@link diagnoseLine}: a storable (possibly re-escaped) line, or why it is not. */
export type LineDiagnosis = { ok: true; json: string; mbid: string } | { ok: false; reason: string };

// Control characters are not allowed raw inside JSON strings; escaping them keeps the same value.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching raw control characters is the point
const RAW_CONTROL = /[\u0000-\u001f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above, without the stateful global flag
const HAS_RAW_CONTROL = /[\u0000-\u001f]/;

function escapeControl(text: string): string {
  return text.replace(RAW_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
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
  if (parsed.error !== undefined) return { ok: false, reason: `not JSON: ${parsed.error}` };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  const id = (value as { id?: unknown }).id;
  if (id === undefined) return { ok: false, reason: 'no "id"' };
  if (!isMbid(id)) return { ok: false, reason: `invalid MBID ${JSON.stringify(id).slice(0, 80)}` };
  return { ok: true, json, mbid: id };
}

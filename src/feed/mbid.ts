const MBID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * True when `value` is an MBID (a UUID in canonical text form, either case of hex digits). Used by
 * the writer to judge JSON dump lines and by GraphQL to judge `mbid` arguments.
 */
export function isMbid(value: unknown): value is string {
  return typeof value === 'string' && MBID_PATTERN.test(value);
}

// The value of each lower-case hex digit by its char code, -1 for every other code below 128.
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) HEX_VALUE['0123456789abcdef'.charCodeAt(digit)] = digit;
// The same, upper-case digits included.
const ANY_CASE_HEX_VALUE = HEX_VALUE.slice();
for (let digit = 10; digit < 16; digit++) ANY_CASE_HEX_VALUE['ABCDEF'.charCodeAt(digit - 10)] = digit;
const HYPHEN = 45;

/** -1 unless every char of `text` in [from, to) is a lower-case hex digit (then 0 or more). */
function hexRun(text: string, from: number, to: number): number {
  let seen = 0;
  for (let i = from; i < to; i++) seen |= HEX_VALUE[text.charCodeAt(i)] ?? -1;
  return seen;
}

/**
 * True when `value` is an MBID written in lower case, the form livefeed stores and answers: such a
 * value needs no lower-casing (GraphQL's `checkMbids` takes a list of them as it is). A table of
 * char codes rather than the pattern of {@link isMbid}: 7 against 17 µs for the 100 MBIDs of one
 * `resolve` (bench/RESULTS.md, "resolve of 100").
 */
export function isLowerCaseMbid(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 36) return false;
  if (value.charCodeAt(8) !== HYPHEN || value.charCodeAt(13) !== HYPHEN) return false;
  if (value.charCodeAt(18) !== HYPHEN || value.charCodeAt(23) !== HYPHEN) return false;
  // The five groups of hex digits between the hyphens, OR-ed: negative when any char is not one.
  const firstThree = hexRun(value, 0, 8) | hexRun(value, 9, 13) | hexRun(value, 14, 18);
  return (firstThree | hexRun(value, 19, 23) | hexRun(value, 24, 36)) >= 0;
}

/**
 * The number written by the first 8 hex digits of `mbid`, either case (0 to 2^32 - 1, the UUID's
 * first 32 bits), or -1 when they are not 8 hex digits. Random for MBIDs, so a hash for free.
 */
export function mbidHead32(mbid: string): number {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const digit = ANY_CASE_HEX_VALUE[mbid.charCodeAt(i)] ?? -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

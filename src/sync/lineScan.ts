/**
 * The fast path of a JSON dump line's check: one pass over the line's bytes that validates the JSON
 * text and finds the MBID (sync/ingest.ts); a line it refuses goes to `diagnoseLine`
 * (sync/lines.ts), which says why. Hand-written for speed: the measurements are in bench/RESULTS.md.
 */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

// Open containers of the line being scanned (OPEN_OBJECT or OPEN_ARRAY); grown on demand, reused.
let containers = new Uint8Array(64);

/** True for the bytes of a JSON escape after the backslash, `u` excluded (`" \ / b f n r t`). */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;
/** 1 for ASCII hex digits. */
const HEX_DIGIT = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX_DIGIT[c.charCodeAt(0)] = 1;

function skipWhitespace(b: Uint8Array, i: number, n: number): number {
  while (i < n) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
  return i;
}

/** 1 for the bytes that stand for themselves inside a JSON string (not `"`, `\\`, or a control character). */
const STRING_BYTE = new Uint8Array(256);
for (let c = 0x20; c < 256; c++) STRING_BYTE[c] = c === QUOTE || c === BACKSLASH ? 0 : 1;

/** Index after the closing quote of the string whose body starts at `i`, or -1 when it is not JSON. */
function skipString(b: Uint8Array, i: number, n: number): number {
  for (;;) {
    while (i < n && STRING_BYTE[b[i]!] === 1) i++;
    if (i >= n) return -1;
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return -1;
    const e = b[i + 1];
    if (e === undefined) return -1;
    if (SIMPLE_ESCAPE[e] === 1) i += 2;
    else if (
      e === 0x75 &&
      HEX_DIGIT[b[i + 2]!] &&
      HEX_DIGIT[b[i + 3]!] &&
      HEX_DIGIT[b[i + 4]!] &&
      HEX_DIGIT[b[i + 5]!]
    )
      i += 6;
    else return -1;
  }
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Index after the JSON number starting at `i`, or -1 when it is not one (RFC 8259 grammar). */
function skipNumber(b: Uint8Array, i: number): number {
  if (b[i] === 0x2d) i++;
  if (b[i] === 0x30) i++;
  else if (isDigit(b[i])) while (isDigit(b[i])) i++;
  else return -1;
  if (b[i] === 0x2e) {
    i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    if (!isDigit(b[i])) return -1;
    while (isDigit(b[i])) i++;
  }
  return i;
}

/** 1 for lower-case ASCII hex digits. */
const LOWER_HEX_DIGIT = new Uint8Array(256);
for (const c of '0123456789abcdef') LOWER_HEX_DIGIT[c.charCodeAt(0)] = 1;

/**
 * True when the 36 bytes at `i` are a UUID in canonical text form with lower-case hex digits, as
 * upstream writes MBIDs and as they are looked up. An upper-case one goes to `diagnoseLine`, which
 * stores it under its lower-case MBID, so that `entity(mbid)` finds it.
 */
function isMbidAt(b: Uint8Array, i: number): boolean {
  for (let k = 0; k < 36; k++) {
    const c = b[i + k];
    if (c === undefined) return false;
    if (k === 8 || k === 13 || k === 18 || k === 23) {
      if (c !== 0x2d) return false;
    } else if (LOWER_HEX_DIGIT[c] !== 1) return false;
  }
  return true;
}

/**
 * Top-level members whose values {@link mbidOffset} can locate: the fields of the search index
 * (db/searchIndex.ts). Member k's span is at `spans[2k]`, `spans[2k + 1]`.
 */
export const SPANNED_MEMBERS = ['name', 'title', 'sort-name', 'disambiguation', 'aliases'] as const;
/** Length of the `spans` array {@link mbidOffset} fills. */
export const MEMBER_SPANS = SPANNED_MEMBERS.length * 2;
const SPANNED_BYTES = SPANNED_MEMBERS.map((name) => Buffer.from(name, 'latin1'));

/**
 * 2k when the key whose text (without quotes) is at [from, to) of `b` is {@link SPANNED_MEMBERS}[k]
 * written without escapes, else -1. The key is never decoded: lengths differ, bytes compared.
 */
function spannedMember(b: Uint8Array, from: number, to: number): number {
  const length = to - 1 - from;
  for (let k = 0; k < SPANNED_BYTES.length; k++) {
    const name = SPANNED_BYTES[k]!;
    if (name.length !== length) continue;
    let j = 0;
    while (j < length && b[from + j] === name[j]) j++;
    if (j === length) return 2 * k;
  }
  return -1;
}

/**
 * The fast path of the ingest: byte offset of the MBID in `line` (36 ASCII bytes) when `line` is
 * one JSON text (RFC 8259, as `JSON.parse` accepts it, surrounding whitespace allowed) whose value
 * is an object with exactly one top-level member `"id"`, written without escapes, holding an MBID
 * string written without escapes; otherwise -1. One pass, no allocation. It never accepts a line
 * that `JSON.parse` refuses; lines it refuses for other reasons (escaped `id`, duplicate `"id"`)
 * go to `diagnoseLine`, which decides. UTF-8 validity is not checked here (see `isUtf8`).
 * With `spans` (length {@link MEMBER_SPANS}), the same pass also records where the values of the
 * top-level members of {@link SPANNED_MEMBERS} are: `spans[2k]` the first byte of member k's value,
 * `spans[2k + 1]` the byte after it, both -1 when the line has no such member. A member seen twice
 * fails the fast path (-1), as SQLite's JSON functions and `JSON.parse` disagree on which one counts.
 * Written for V8, which inlines no helper into this function: strings are skipped in place (a call
 * per token cost 16 % over the 561 MB of real-shaped lines of the bench's lines3k and lines6k, 655
 * against 550 ms in a warm loop; bench/RESULTS.md, "The line check without a call per token").
 */
export function mbidOffset(b: Uint8Array, spans?: Int32Array): number {
  const n = b.length;
  let i = skipWhitespace(b, 0, n);
  if (b[i] !== OPEN_OBJECT) return -1;
  let depth = 0;
  let mbid = -1;
  // Index into `spans` of the member whose value is being scanned, else -1.
  let member = -1;
  // True when `i` is at a key (an object's first, or after a comma in an object), else at a value.
  let atKey = false;
  spans?.fill(-1);
  for (;;) {
    if (atKey) {
      i = readKey(b, i, n, depth, spans);
      if (i < 0) return -1;
      atKey = false;
      if (keyKind !== ID) {
        if (keyKind >= 0) member = keyKind;
        continue;
      }
      if (mbid !== -1 || b[i] !== QUOTE || !isMbidAt(b, i + 1) || b[i + 37] !== QUOTE) return -1;
      mbid = i + 1;
      i += 38;
    } else {
      const c = b[i];
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (depth === containers.length) {
          const grown = new Uint8Array(depth * 2);
          grown.set(containers);
          containers = grown;
        }
        containers[depth++] = c;
        i++;
        if (i < n && b[i]! <= 0x20) i = skipWhitespace(b, i, n);
        if (b[i] !== (c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          atKey = c === OPEN_OBJECT;
          continue;
        }
        depth--;
        i++;
      } else {
        if (c === QUOTE) {
          // Inline: V8 does not inline helpers into this function, and strings are most tokens.
          i++;
          while (i < n && STRING_BYTE[b[i]!] === 1) i++;
          i = b[i] === QUOTE ? i + 1 : skipString(b, i, n);
        } else if (c === 0x74) i = b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65 ? i + 4 : -1;
        else if (c === 0x66) {
          i = b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65 ? i + 5 : -1;
        } else if (c === 0x6e) i = b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c ? i + 4 : -1;
        else if (c === 0x2d || isDigit(c)) i = skipNumber(b, i);
        else return -1;
        if (i < 0) return -1;
      }
    }
    // After a value: the containers it closes, then a comma and the next key or value.
    for (;;) {
      if (member >= 0 && depth === 1) {
        spans![member + 1] = i;
        member = -1;
      }
      if (i < n && b[i]! <= 0x20) i = skipWhitespace(b, i, n);
      if (depth === 0) return i === n ? mbid : -1;
      const open = containers[depth - 1];
      if (b[i] === COMMA) {
        i++;
        if (i < n && b[i]! <= 0x20) i = skipWhitespace(b, i, n);
        atKey = open === OPEN_OBJECT;
        break;
      }
      if (b[i] !== (open === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return -1;
      depth--;
      i++;
    }
  }
}

/** {@link keyKind} of the top-level `"id"`. */
const ID = -2;
/**
 * What {@link readKey} read: {@link ID}, 2k for SPANNED_MEMBERS[k] at depth 1, else -1. A second
 * return value kept outside the call, so that a key costs no allocation.
 */
let keyKind = -1;

/**
 * Reads the key whose quote is at `i`, the colon and whitespace; returns the index of the value
 * (or -1 when not JSON) and sets {@link keyKind}. A spanned member's value start goes to `spans`;
 * a member seen twice fails (-1).
 */
function readKey(b: Uint8Array, i: number, n: number, depth: number, spans: Int32Array | undefined): number {
  if (b[i] !== QUOTE) return -1;
  const start = i;
  i++;
  while (i < n && STRING_BYTE[b[i]!] === 1) i++;
  i = b[i] === QUOTE ? i + 1 : skipString(b, i, n);
  if (i < 0) return -1;
  let kind = -1;
  if (depth === 1) {
    if (i - start === 4 && b[start + 1] === 0x69 && b[start + 2] === 0x64) kind = ID;
    else if (spans !== undefined) kind = spannedMember(b, start + 1, i);
  }
  if (i < n && b[i]! <= 0x20) i = skipWhitespace(b, i, n);
  if (b[i] !== COLON) return -1;
  i++;
  if (i < n && b[i]! <= 0x20) i = skipWhitespace(b, i, n);
  if (kind >= 0) {
    if (spans![kind] !== -1) return -1;
    spans![kind] = i;
  }
  keyKind = kind;
  return i;
}

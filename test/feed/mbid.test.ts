import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isLowerCaseMbid, isMbid, mbidHead32 } from '../../src/feed/mbid.js';

// The definition isLowerCaseMbid's table of char codes must agree with.
const LOWER_CASE_MBID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Every kind of char that could slip through a table lookup: digits and letters on both sides of
// the hex ranges, upper case, the hyphen, NUL, non-ASCII (a digit of another script, an accented
// letter, a char above 255, half of a surrogate pair).
const PROBES = ['0', '9', 'a', 'f', 'g', 'A', 'F', 'G', '/', ':', '`', '-', '\0', '٣', 'é', 'Ā', '\uD83C'];

function mutants(mbid: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < mbid.length; i++) {
    for (const probe of PROBES) out.push(mbid.slice(0, i) + probe + mbid.slice(i + 1));
  }
  return out;
}

describe('isLowerCaseMbid', () => {
  it('agrees with the pattern on every one-char change of an MBID, at every position', () => {
    const mbid = randomUUID();
    const cases = mutants(mbid);
    expect(cases.length).toBe(36 * PROBES.length);
    for (const value of cases)
      expect([value, isLowerCaseMbid(value)]).toEqual([value, LOWER_CASE_MBID.test(value)]);
    expect(cases.filter(isLowerCaseMbid).length).toBeGreaterThan(36 * 3);
  });

  it('takes lower-case MBIDs and refuses other lengths, cases and types', () => {
    for (let i = 0; i < 200; i++) expect(isLowerCaseMbid(randomUUID())).toBe(true);
    const mbid = randomUUID();
    for (const value of [
      mbid.toUpperCase(),
      `${mbid}0`,
      mbid.slice(1),
      ` ${mbid.slice(1)}`,
      mbid.replaceAll('-', ''),
    ]) {
      expect(isLowerCaseMbid(value)).toBe(false);
    }
    expect(isMbid(mbid.toUpperCase())).toBe(true);
    for (const value of [undefined, null, 42, { length: 36 }, [mbid]])
      expect(isLowerCaseMbid(value)).toBe(false);
  });
});

describe('mbidHead32', () => {
  it('is the number of the first 8 hex digits, in either case', () => {
    for (let i = 0; i < 200; i++) {
      const mbid = randomUUID();
      expect(mbidHead32(mbid)).toBe(Number.parseInt(mbid.slice(0, 8), 16));
      expect(mbidHead32(mbid.toUpperCase())).toBe(mbidHead32(mbid));
    }
    expect(mbidHead32('ffffffff-0000')).toBe(2 ** 32 - 1);
    expect(mbidHead32('00000000')).toBe(0);
  });

  it('is -1 when the first 8 chars are not all hex digits', () => {
    for (const value of ['', '1234567', '1234567g-', '-2345678', '1234 678', '١٢٣٤٥٦٧٨', '12345é78']) {
      expect(mbidHead32(value)).toBe(-1);
    }
  });
});

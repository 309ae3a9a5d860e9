import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mbidOffset } from '../../src/sync/lineScan.js';
import { diagnoseLine } from '../../src/sync/lines.js';

const SAMPLES = fileURLToPath(new URL('../../fixtures/samples/', import.meta.url));
const samples = readdirSync(SAMPLES).flatMap((f) =>
  readFileSync(SAMPLES + f, 'utf8')
    .split('\n')
    .filter(Boolean),
);
const ID = '0383dadf-2a4e-4d10-a46a-e9e041da8eb3';

/** What the fast path must agree with: JSON.parse, an object, exactly the top-level id. */
function accepted(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    const id = (value as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

function check(text: string): number {
  const bytes = Buffer.from(text);
  const at = mbidOffset(bytes);
  if (at >= 0) {
    // Never accepts what JSON.parse refuses, and finds the very id JSON.parse sees.
    expect(accepted(text)).toBe(bytes.toString('latin1', at, at + 36));
  }
  return at;
}

describe('mbidOffset (the ingest fast path)', () => {
  it('accepts every sample line and finds its MBID', () => {
    for (const line of samples) {
      const at = check(line);
      expect(at).toBeGreaterThan(0);
      expect(Buffer.from(line).toString('latin1', at, at + 36)).toBe((JSON.parse(line) as { id: string }).id);
    }
  });

  it.each([
    [`{"id":"${ID}"}`, true],
    [
      ` \t\r\n{ "a" : [ 1 , -0.5e+10 , true , false , null , {} , [] , "\\u00e9\\"\\\\\\/\\b\\f\\n\\r\\t" ] , "id" : "${ID}" } \r`,
      true,
    ],
    [`{"id":"${ID.toUpperCase()}"}`, false], // upper case: diagnoseLine stores it under the lower-case MBID
    [`{"x":{"id":"${ID}"}}`, false], // only a nested id
    [`{"id":"${ID}","id":"${ID}"}`, false], // duplicate: JSON.parse takes the last; diagnoseLine decides
    [`{"\\u0069d":"${ID}"}`, false], // escaped key: left to diagnoseLine
    [`{"id":"\\u0030${ID.slice(1)}"}`, false],
    [`{"id":"${ID}x"}`, false],
    [`{"id":${ID}}`, false],
    [`[{"id":"${ID}"}]`, false],
    [`{"id":"${ID}",}`, false],
    [`{"id":"${ID}"} {}`, false],
    [`{"id":"${ID}","a":01}`, false],
    [`{"id":"${ID}","a":1.}`, false],
    [`{"id":"${ID}","a":.5}`, false],
    [`{"id":"${ID}","a":+1}`, false],
    [`{"id":"${ID}","a":tru}`, false],
    [`{"id":"${ID}","a":"\t"}`, false], // raw control character in a string
    [`{"id":"${ID}","a":"\\x"}`, false],
    [`{"id":"${ID}","a":"\\u12g4"}`, false],
    [`{"id":"${ID}" "a":1}`, false],
    [`{"id":"${ID}","a":[1 2]}`, false],
    [`{"id":"${ID}","a":"unterminated}`, false],
    [`\u2028{"id":"${ID}"}`, false],
    ['', false],
    ['{', false],
  ])('%s → %s', (text, ok) => {
    expect(check(text) >= 0).toBe(ok);
  });

  it('never accepts a line JSON.parse refuses (random mutations of real lines)', () => {
    const alphabet = [
      '"',
      '\\',
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      ' ',
      '\t',
      '\n',
      '0',
      '-',
      '.',
      'e',
      'u',
      'x',
      '\u0001',
      'é',
      'n',
    ];
    let random = 12345;
    const next = (n: number) => {
      random = (random * 1103515245 + 12345) % 2 ** 31;
      return random % n;
    };
    let acceptedCount = 0;
    for (let i = 0; i < 20000; i++) {
      let line = samples[next(samples.length)]!.replace(
        /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
        () => randomUUID(),
      );
      for (let m = next(3); m >= 0; m--) {
        const p = next(line.length + 1);
        const op = next(3);
        const c = alphabet[next(alphabet.length)]!;
        line =
          op === 0
            ? line.slice(0, p) + c + line.slice(p)
            : op === 1
              ? line.slice(0, p) + line.slice(p + 1)
              : line.slice(0, p) + c + line.slice(p + 1);
      }
      if (check(line) >= 0) acceptedCount++;
    }
    expect(acceptedCount).toBeGreaterThan(1000);
  });
});

describe('diagnoseLine (lines the fast path refuses)', () => {
  const ID = '6c5b2b6d-3c3d-4b3e-8a37-2f4a5d7e9b10';

  it('escapes raw control characters inside strings only: JSON whitespace between tokens stays', () => {
    // FEED.md: strings may hold a raw `\r`; key order and spacing vary (a TAB between tokens).
    const line = `{"id":\t"${ID}",\r"title":"a\rb\tc\u0001d",\t"n": [1,\t2]}`;
    expect(mbidOffset(Buffer.from(line))).toBeLessThan(0);
    const diagnosis = diagnoseLine(line);
    expect(diagnosis).toEqual({ ok: true, mbid: ID, json: expect.any(String) });
    const json = (diagnosis as { json: string }).json;
    expect(JSON.parse(json)).toEqual({ id: ID, title: 'a\rb\tc\u0001d', n: [1, 2] });
    expect(json).toContain('"a\\u000db\\u0009c\\u0001d"');
    expect(json).toContain(`{"id":\t"${ID}",\r"title"`);
  });

  it('stores an upper-case id under its lower-case MBID, the line as written (found by entity(mbid))', () => {
    const line = `{"id":"${ID.toUpperCase()}","name":"Shouted"}`;
    expect(diagnoseLine(line)).toEqual({ ok: true, mbid: ID, json: line });
    expect(diagnoseLine(`{"id":"${ID.toUpperCase()}x"}`)).toMatchObject({
      ok: false,
      reason: /^invalid MBID/,
    });
  });

  it('keeps escapes whole and refuses what is not JSON once strings are escaped', () => {
    expect(diagnoseLine(`{"id":"${ID}","a":"\\"\r\\\\"}`)).toMatchObject({ ok: true });
    const notJson = [
      `{"id":"${ID}",\u0001"a":1}`, // a control byte between tokens
      'nul\u0000byte', // the parser's message quotes a short line whole, NUL and all
      `{"id":"${ID}","a":"\\\t"}`, // a raw TAB as an escape's character
    ];
    for (const line of notJson) {
      const diagnosis = diagnoseLine(line);
      expect(diagnosis).toMatchObject({ ok: false, reason: /^not JSON/ });
      // The parser's message quotes the line: the reason holds no raw control character (PostgreSQL's text refuses a NUL).
      const reason = (diagnosis as { reason: string }).reason;
      expect([...reason].filter((c) => c.charCodeAt(0) < 0x20)).toEqual([]);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { escapeCopy, splitCopyLine, unescapeCopy } from '../../../src/feed/replication/copyText.js';

describe('unescapeCopy', () => {
  it.each([
    ['plain text', 'Ed Sheeran', 'Ed Sheeran'],
    ['escaped backslash', 'a\\\\b', 'a\\b'],
    ['tab, newline, carriage return', 'a\\tb\\nc\\rd', 'a\tb\nc\rd'],
    ['backspace, form feed, vertical tab', '\\b\\f\\v', '\b\f\v'],
    ['JSON escape survives one COPY level', '{"name":"a\\\\"b"}', '{"name":"a\\"b"}'],
    ['JSON \\n stays two characters', '{"x":"1\\\\n2"}', '{"x":"1\\n2"}'],
    ['octal byte', '\\101\\102', 'AB'],
    ['octal bytes spelling UTF-8', '\\303\\274', 'ü'],
    ['hex bytes spelling UTF-8', '\\xc3\\xbc!', 'ü!'],
    ['one-digit hex', '\\x9z', '\tz'],
    ['escaped backslash before x is not hex', '\\\\x41', '\\x41'],
    ['other backslashed character is itself', '\\q\\N', 'qN'],
    ['unicode untouched', 'محمد منير — Самый', 'محمد منير — Самый'],
  ])('%s', (_name, input, expected) => {
    expect(unescapeCopy(input)).toBe(expected);
  });

  it.each([
    ['lone trailing backslash', 'abc\\', /lone backslash/],
    ['invalid UTF-8 byte escapes', '\\xff\\xfe', /valid UTF-8/],
  ])('rejects %s', (_name, input, message) => {
    expect(() => unescapeCopy(input)).toThrow(message);
  });
});

describe('splitCopyLine', () => {
  it.each([
    ['NULLs', '1\t\\N\tx', ['1', null, 'x']],
    ['escaped tab stays inside its value', 'a\\tb\tc', ['a\tb', 'c']],
    ['empty values', '\t', ['', '']],
    ['\\N only as a whole value', 'x\\N\t\\\\N', ['xN', '\\N']],
  ])('%s', (_name, line, expected) => {
    expect(splitCopyLine(line)).toEqual(expected);
  });

  it('names the column of a bad value', () => {
    expect(() => splitCopyLine('1\tbad\\')).toThrow(/column 2: .*lone backslash/);
  });
});

describe('escapeCopy', () => {
  it.each([['a\\b\tc\nd\re\bf\fg\vh'], ['{"name":"x\\"y\\\\z"}'], ['ünïcödé'], ['']])(
    'round-trips %j',
    (value) => {
      expect(splitCopyLine(escapeCopy(value))).toEqual([value]);
    },
  );

  it('writes null as \\N', () => {
    expect(escapeCopy(null)).toBe('\\N');
  });
});

import { describe, expect, it } from 'vitest';
import { parsePgTextArray, parseTableName } from '../../../src/feed/replication/identifiers.js';

describe('parseTableName', () => {
  it.each([
    ['musicbrainz.artist', 'musicbrainz.artist'],
    ['"musicbrainz"."artist"', 'musicbrainz.artist'],
    ['"musicbrainz".release_group', 'musicbrainz.release_group'],
    ['cover_art_archive."cover_art"', 'cover_art_archive.cover_art'],
    ['"artist"', 'musicbrainz.artist'],
    ['"odd""schema"."t.x"', 'odd"schema.t.x'],
  ])('%s → %s', (input, expected) => {
    expect(parseTableName(input)).toBe(expected);
  });

  it.each([[''], ['a.b.c'], ['"unterminated'], ['a.'], ['.a'], ['a"b.c'], ['"a"x.b']])(
    'rejects %j',
    (input) => {
      expect(() => parseTableName(input)).toThrow(/table name/);
    },
  );
});

describe('parsePgTextArray', () => {
  it.each([
    ['{id}', ['id']],
    ['{artist,label}', ['artist', 'label']],
    ['{"odd name","with\\"quote",plain}', ['odd name', 'with"quote', 'plain']],
    ['{}', []],
  ])('%s', (input, expected) => {
    expect(parsePgTextArray(input)).toEqual(expected);
  });

  it.each([['id'], ['{a,}'], ['{NULL}'], ['{"a}'], ['{a,,b}']])('rejects %j', (input) => {
    expect(() => parsePgTextArray(input)).toThrow(/array/);
  });
});

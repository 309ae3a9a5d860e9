import { describe, expect, it } from 'vitest';
import { escapeCopy } from '../../../src/feed/replication/copyText.js';
import {
  parseDbmirrorPendingDataLine,
  parseDbmirrorPendingLine,
  parsePendingDataLine,
  parsePendingKeysLine,
  parsePendingTsLine,
} from '../../../src/feed/replication/lines.js';

/** A COPY line as PostgreSQL writes it. */
const line = (...columns: (string | null)[]) => columns.map(escapeCopy).join('\t');

// Sample names from fixtures/samples/artist.jsonl.
const ED = {
  id: 1,
  gid: 'b8a7c51f-362c-4dcb-a259-bc6e0095f0a6',
  name: 'Ed Sheeran',
  sort_name: 'Sheeran, Ed',
};
const MOUNIR = {
  id: 2,
  gid: '5235052b-7fa0-498b-accf-26b9e7767da7',
  name: 'محمد منير',
  sort_name: 'Mounir, Mohamed',
};

describe('parsePendingDataLine', () => {
  const tricky = [
    ['backslashes in a value', { ...ED, comment: 'C:\\music\\ed' }],
    ['quote and backslash-quote', { ...ED, name: 'say "hi" \\"there\\"' }],
    ['tab and newline in a value', { ...ED, comment: 'line 1\nline\t2\r' }],
    [
      'JSON null and nested values',
      { ...ED, comment: null, ended: false, ipis: ['00600664284'], area: { id: 8 } },
    ],
    ['unicode and astral characters', { ...MOUNIR, comment: '🎸 U+2028:\u2028 U+0085:\u0085' }],
    ['literal \\N text in a value', { ...ED, comment: '\\N' }],
  ] as const;

  it.each(tricky)('%s (compact JSON)', (_name, row) => {
    const text = line('1001', 'musicbrainz.artist', 'i', '77', null, JSON.stringify(row), null, null);
    const record = parsePendingDataLine(text);
    expect(record).toMatchObject({
      seqid: 1001,
      table: 'musicbrainz.artist',
      op: 'i',
      xid: 77,
      oldJson: null,
    });
    expect(JSON.parse(record.newJson!)).toEqual(row);
  });

  it.each(tricky)('%s (pretty JSON: raw tabs and newlines between tokens)', (_name, row) => {
    const json = JSON.stringify(row, null, '\t');
    const text = line('5', '"musicbrainz"."artist"', 'd', '9', json, null, null, null);
    // COPY escaped them: no raw newline, raw tabs only between the 8 columns.
    expect(text).not.toContain('\n');
    expect(text.split('\t')).toHaveLength(8);
    const record = parsePendingDataLine(text);
    expect(record).toMatchObject({ table: 'musicbrainz.artist', op: 'd', newJson: null });
    expect(JSON.parse(record.oldJson!)).toEqual(row);
  });

  it('reads an update with both row images', () => {
    const record = parsePendingDataLine(
      line('3', 'musicbrainz.artist', 'u', '4', '{"id":1}', '{"id":1,"name":"x"}', null, null),
    );
    expect(record).toEqual({
      seqid: 3,
      table: 'musicbrainz.artist',
      op: 'u',
      xid: 4,
      oldJson: '{"id":1}',
      newJson: '{"id":1,"name":"x"}',
    });
  });

  it.each([
    ['too few columns', line('1', 'musicbrainz.artist', 'i', '1', null, '{}'), /expected 8 columns, found 6/],
    ['unknown op', line('1', 'musicbrainz.artist', 'x', '1', null, '{}', null, null), /unknown op "x"/],
    [
      'non-integer seqid',
      line('1.5', 'musicbrainz.artist', 'i', '1', null, '{}', null, null),
      /seqid is not an integer/,
    ],
    ['NULL xid', line('1', 'musicbrainz.artist', 'i', null, null, '{}', null, null), /xid is NULL/],
    [
      'insert without newdata',
      line('1', 'musicbrainz.artist', 'i', '1', '{}', null, null, null),
      /newdata is NULL for op i/,
    ],
    [
      'delete without olddata',
      line('1', 'musicbrainz.artist', 'd', '1', null, '{}', null, null),
      /olddata is NULL for op d/,
    ],
    [
      'update without olddata',
      line('1', 'musicbrainz.artist', 'u', '1', null, '{}', null, null),
      /olddata is NULL for op u/,
    ],
    ['bad table name', line('1', 'a.b.c', 'i', '1', null, '{}', null, null), /malformed table name/],
  ])('rejects %s', (_name, text, message) => {
    expect(() => parsePendingDataLine(text)).toThrow(message);
  });
});

describe('parsePendingKeysLine', () => {
  it.each([
    [line('musicbrainz.artist', '{id}'), { table: 'musicbrainz.artist', columns: ['id'] }],
    [
      line('"musicbrainz"."l_artist_artist"', '{id}'),
      { table: 'musicbrainz.l_artist_artist', columns: ['id'] },
    ],
    [
      line('musicbrainz.artist_gid_redirect', '{gid}'),
      { table: 'musicbrainz.artist_gid_redirect', columns: ['gid'] },
    ],
    [
      line('musicbrainz.editor_collection_artist', '{collection,artist}'),
      { table: 'musicbrainz.editor_collection_artist', columns: ['collection', 'artist'] },
    ],
  ])('%s', (text, expected) => {
    expect(parsePendingKeysLine(text)).toEqual(expected);
  });

  it.each([
    [line('musicbrainz.artist', '{}'), /empty array/],
    [line('musicbrainz.artist', null), /keys is NULL/],
    [line('musicbrainz.artist'), /expected 2 columns/],
  ])('rejects %j', (text, message) => {
    expect(() => parsePendingKeysLine(text)).toThrow(message);
  });
});

describe('parsePendingTsLine', () => {
  it.each([
    [line('77', '2026-05-11 21:14:26.878674+00'), { xid: 77, timestamp: '2026-05-11T21:14:26.878674Z' }],
    [line('78', '2026-05-11 23:14:26+02'), { xid: 78, timestamp: '2026-05-11T21:14:26.000000Z' }],
  ])('%s', (text, expected) => {
    expect(parsePendingTsLine(text)).toEqual(expected);
  });

  it('rejects a bad timestamp', () => {
    expect(() => parsePendingTsLine(line('1', 'yesterday'))).toThrow(/not a PostgreSQL timestamp/);
  });
});

describe('parseDbmirrorPendingLine', () => {
  it.each([
    [
      line('12', '"musicbrainz"."artist"', 'u', '99'),
      { seqid: 12, table: 'musicbrainz.artist', op: 'u', xid: 99 },
    ],
    [
      line('13', 'musicbrainz.release_group', 'd', '99'),
      { seqid: 13, table: 'musicbrainz.release_group', op: 'd', xid: 99 },
    ],
  ])('%s', (text, expected) => {
    expect(parseDbmirrorPendingLine(text)).toEqual(expected);
  });

  it('rejects sequence operations, which MusicBrainz never replicates', () => {
    expect(() => parseDbmirrorPendingLine(line('1', '"artist_id_seq"', 's', '1'))).toThrow(/unknown op "s"/);
  });
});

describe('parseDbmirrorPendingDataLine', () => {
  it.each([
    ['key row', line('12', 't', `"id"='1' `), { seqid: 12, isKey: true, data: { id: '1' } }],
    [
      'value row with NULL, quotes, backslash, tab and newline',
      line('12', 'f', `"id"='1' "name"='O''Brien \\'Jr\\' C:\\\\x' "comment"= "bio"='a\tb\nc' `),
      {
        seqid: 12,
        isKey: false,
        data: { id: '1', name: "O'Brien 'Jr' C:\\x", comment: null, bio: 'a\tb\nc' },
      },
    ],
    [
      'unicode',
      line('3', 'f', `"name"='محمد منير' `),
      { seqid: 3, isKey: false, data: { name: 'محمد منير' } },
    ],
  ])('%s', (_name, text, expected) => {
    expect(parseDbmirrorPendingDataLine(text)).toEqual(expected);
  });

  it.each([
    [line('1', 'x', `"id"='1' `), /iskey is not t or f/],
    [line('1', 't', `"id"='1`), /unterminated value/],
    [line('1', 't'), /expected 3 columns/],
  ])('rejects %j', (text, message) => {
    expect(() => parseDbmirrorPendingDataLine(text)).toThrow(message);
  });
});

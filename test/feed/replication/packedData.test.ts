import { describe, expect, it } from 'vitest';
import { packData, parsePackedData } from '../../../src/feed/replication/packedData.js';

describe('parsePackedData', () => {
  it.each([
    ['one key column', `"id"='1' `, { id: '1' }],
    ['NULL value', `"id"='1' "comment"= "name"='x' `, { id: '1', comment: null, name: 'x' }],
    ['NULL last', `"id"='1' "end_area"= `, { id: '1', end_area: null }],
    ['empty string is not NULL', `"comment"='' `, { comment: '' }],
    ['doubled quote', `"name"='O''Brien' `, { name: "O'Brien" }],
    ['backslash quote', `"name"='O\\'Brien' `, { name: "O'Brien" }],
    ['doubled backslash', `"name"='a\\\\b' `, { name: 'a\\b' }],
    ['backslash then quote', `"name"='\\\\''' `, { name: "\\'" }],
    ['separators inside a value', `"name"='a" "b"=''c'' ' `, { name: `a" "b"='c' ` }],
    ['tab and newline inside a value', `"name"='a\tb\nc' `, { name: 'a\tb\nc' }],
    [
      'unicode',
      `"name"='محمد منير' "sort_name"='Mounir, Mohamed' `,
      { name: 'محمد منير', sort_name: 'Mounir, Mohamed' },
    ],
    ['missing final space', `"id"='7'`, { id: '7' }],
    ['nothing', '', {}],
  ])('%s', (_name, input, expected) => {
    expect(parsePackedData(input)).toEqual(expected);
  });

  it.each([
    ['no column quote', `id='1' `, /expected "column"/],
    ['unterminated value', `"id"='1 `, /unterminated value of column id/],
    ['unterminated name', `"id='1' `, /expected =|unterminated/],
    ['no space between pairs', `"a"='1'"b"='2' `, /expected a space after column a/],
    ['no equals sign', `"a" '1' `, /expected =/],
  ])('rejects %s', (_name, input, message) => {
    expect(() => parsePackedData(input)).toThrow(message);
  });

  it('round-trips what packData writes', () => {
    const row = { id: '1', name: "it's a \\ test", comment: null, empty: '' };
    expect(packData(row)).toBe(`"id"='1' "name"='it''s a \\\\ test' "comment"= "empty"='' `);
    expect(parsePackedData(packData(row))).toEqual(row);
  });
});

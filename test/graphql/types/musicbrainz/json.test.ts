import { describe, expect, it } from 'vitest';
import { integer } from '../../../../src/graphql/types/musicbrainz/json.js';

const at = 'recording 0f0b8a5e-8c64-4a35-9c1e-2c4f5f1d6d00 (packet 7, line 3)';
const node = (json: Record<string, unknown>) => ({ json, at, path: 'media[0]' });

describe('integer: a typed field read from a JSON dump line', () => {
  it('reads integers that fit GraphQL Int, null when absent or null', () => {
    expect(integer(node({ length: 215_000 }), 'length')).toBe(215_000);
    expect(integer(node({ length: -(2 ** 31) }), 'length')).toBe(-(2 ** 31));
    expect(integer(node({ length: 2 ** 31 - 1 }), 'length')).toBe(2 ** 31 - 1);
    expect(integer(node({ length: null }), 'length')).toBeNull();
    expect(integer(node({}), 'length')).toBeNull();
  });

  it.each([[9_999_999_999], [2 ** 31], [-(2 ** 31) - 1]])(
    'refuses %d with UNEXPECTED_JSON naming the line and path, not the serializer error without a code',
    (value) => {
      let error: unknown;
      try {
        integer(node({ length: value }), 'length');
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({
        message: `${at}: media[0].length is not an integer of 32 bits (it is ${value}) as upstream writes it`,
        extensions: { code: 'UNEXPECTED_JSON', at, path: 'media[0].length' },
      });
    },
  );

  it.each([['three minutes'], [1.5], [true]])('refuses %j as not an integer', (value) => {
    expect(() => integer(node({ length: value }), 'length')).toThrow(
      /media\[0\]\.length is not an integer as/,
    );
  });
});

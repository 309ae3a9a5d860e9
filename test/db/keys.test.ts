import { describe, expect, it } from 'vitest';
import { changeId, changeKey, dumpIdRange, MAX_PACKET, MAX_POSITION } from '../../src/db/keys.js';
import { ENTITY_TYPES } from '../../src/feed/entities.js';

describe('change ids', () => {
  it('changeKey undoes changeId for every entity type and at the range ends', () => {
    for (const entity of ENTITY_TYPES) {
      for (const [packet, position] of [
        [0, 0],
        [186_100, 1],
        [MAX_PACKET, MAX_POSITION],
        [1_234_567, 35_000_000],
      ] as const) {
        const id = changeId(packet, entity, position);
        expect(Number.isSafeInteger(id)).toBe(true);
        expect(changeKey(id)).toEqual({ packet, entity, position });
      }
    }
  });

  it('keeps a dump in one id range, in file order', () => {
    const [first, last] = dumpIdRange(186_100, 'recording');
    expect(changeId(186_100, 'recording', 1)).toBeGreaterThan(first);
    expect(changeId(186_100, 'recording', 2)).toBeGreaterThan(changeId(186_100, 'recording', 1));
    expect(changeId(186_100, 'recording', MAX_POSITION)).toBe(last);
    expect(changeId(186_101, 'area', 0)).toBeGreaterThan(last);
  });

  it('refuses an id without an entity type slot', () => {
    const unused = ENTITY_TYPES.length; // slots go up to 15
    expect(() => changeKey(unused * 2 ** 28 + 5)).toThrow(RangeError);
  });
});

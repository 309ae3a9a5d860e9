import { describe, expect, it } from 'vitest';
import { MAX_QUERY_LENGTH, searchIdentity, searchPhrases } from '../../src/graphql/searchSyntax.js';

describe('a search query (README, Search)', () => {
  it('counts characters as a user does: an emoji is one', () => {
    const emoji = 'a😀'.repeat(MAX_QUERY_LENGTH / 2);
    expect(emoji.length).toBe(MAX_QUERY_LENGTH * 1.5);
    expect(searchPhrases(emoji)).toHaveLength(1);
    expect(() => searchPhrases(`${emoji}b`)).toThrow(
      `"query" has ${MAX_QUERY_LENGTH + 1} characters; at most ${MAX_QUERY_LENGTH} are allowed`,
    );
    expect(() => searchPhrases('x'.repeat(5000))).toThrow('"query" has 5000 characters');
  });

  it('binds cursors to the search whatever its case: the index matches either', () => {
    const of = (query: string, slots: number[] | null = null) =>
      searchIdentity({ phrases: searchPhrases(query), slots });
    expect(of('S')).toBe(of('s'));
    expect(of('Grosse BOITE')).toBe(of('grosse boite'));
    expect(of('s')).not.toBe(of('t'));
    expect(of('s', [1])).not.toBe(of('s'));
  });
});

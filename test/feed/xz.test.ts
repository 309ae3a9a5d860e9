import { describe, expect, it } from 'vitest';
import { hasXzProgram, resolveXzDecoder, SMALL_XZ_ARCHIVE_BYTES } from '../../src/feed/xz.js';

describe('the xz decoder `auto` chooses (src/feed/xz.ts)', () => {
  it('finds xz on this machine (dev and CI have it)', () => {
    expect(hasXzProgram()).toBe(true);
  });

  it('decodes a small archive in-process and a large or unknown one with the xz program', () => {
    expect(resolveXzDecoder('auto', 2_140)).toBe('lzma-native');
    expect(resolveXzDecoder('auto', SMALL_XZ_ARCHIVE_BYTES - 1)).toBe('lzma-native');
    expect(resolveXzDecoder('auto', SMALL_XZ_ARCHIVE_BYTES)).toBe('xz');
    expect(resolveXzDecoder('auto', 300_000_000)).toBe('xz');
    expect(resolveXzDecoder('auto', null)).toBe('xz');
    expect(resolveXzDecoder('auto')).toBe('xz');
  });

  it('keeps a decoder chosen explicitly, whatever the size', () => {
    expect(resolveXzDecoder('xz', 100)).toBe('xz');
    expect(resolveXzDecoder('lzma-native', 300_000_000)).toBe('lzma-native');
  });
});

import { execFileSync } from 'node:child_process';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { ArchiveError } from '../../src/feed/errors.js';
import {
  createXzDecompressor,
  hasXzProgram,
  resolveXzDecoder,
  SMALL_XZ_ARCHIVE_BYTES,
  type XzDecoder,
} from '../../src/feed/xz.js';
import { tempDir } from '../support/harness.js';

async function decode(path: string, decoder: XzDecoder): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      chunks.push(chunk);
      done();
    },
  });
  await pipeline(createReadStream(path), createXzDecompressor(decoder, 'test archive'), sink);
  return Buffer.concat(chunks);
}

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

  it.each(['xz', 'lzma-native'] as const)(
    'gives the original bytes, and fails a corrupt archive with an ArchiveError naming it (%s)',
    async (decoder) => {
      const dir = await tempDir();
      try {
        const original = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `{"id": ${i}}\n`).join(''));
        writeFileSync(join(dir.dir, 'data'), original);
        execFileSync('xz', ['-6', join(dir.dir, 'data')]);
        const file = join(dir.dir, 'data.xz');
        expect((await decode(file, decoder)).equals(original)).toBe(true);
        const bytes = readFileSync(file);
        bytes.fill(0x55, 100, 200);
        writeFileSync(file, bytes);
        const error = await decode(file, decoder).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ArchiveError);
        expect((error as Error).message).toMatch(/^test archive: corrupt archive \((xz|liblzma): /);
      } finally {
        await dir.cleanup();
      }
    },
  );
});

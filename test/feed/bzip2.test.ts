import { execFileSync } from 'node:child_process';
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBzip2Decompressor, hasBzip2Program } from '../../src/feed/bzip2.js';
import { ArchiveError } from '../../src/feed/errors.js';
import { tempDir } from '../support/harness.js';

async function decode(path: string, preferProgram: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      chunks.push(chunk);
      done();
    },
  });
  await pipeline(createReadStream(path), createBzip2Decompressor('test archive', preferProgram), sink);
  return Buffer.concat(chunks);
}

describe('bzip2 decompression (child process, or unbzip2-stream without bzip2 on PATH)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let original: Buffer;
  let file: string;

  beforeAll(async () => {
    dir = await tempDir();
    original = Buffer.from(
      Array.from({ length: 20_000 }, (_, i) => `${i}\tmusicbrainz.artist\t{"id": ${i}}\n`).join(''),
    );
    writeFileSync(join(dir.dir, 'data'), original);
    execFileSync('bzip2', ['-9', join(dir.dir, 'data')]);
    file = join(dir.dir, 'data.bz2');
  });
  afterAll(() => dir.cleanup());

  it('finds bzip2 on this machine (dev and CI have it)', () => {
    expect(hasBzip2Program()).toBe(true);
  });

  it.each([true, false])('gives the original bytes (program: %s)', async (preferProgram) => {
    expect((await decode(file, preferProgram)).equals(original)).toBe(true);
  });

  it('fails corrupt input with an ArchiveError naming the archive', async () => {
    const bad = join(dir.dir, 'bad.bz2');
    writeFileSync(bad, 'BZh91AY&SYnot bzip2 at all');
    const error = await decode(bad, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveError);
    expect((error as Error).message).toMatch(/^test archive: corrupt archive \(bzip2: /);
  });
});

import { spawnSync } from 'node:child_process';
import type { Duplex } from 'node:stream';
import unbzip2 from 'unbzip2-stream';
import { programDecompressor } from './decompressProgram.js';

let bzip2OnPath: boolean | undefined;

/** True when a `bzip2` program is on PATH (checked once per process). */
export function hasBzip2Program(): boolean {
  if (bzip2OnPath === undefined) {
    const probe = spawnSync('bzip2', ['--help'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000 });
    bzip2OnPath = probe.status === 0 && /bzip2/.test(probe.stderr?.toString() ?? '');
  }
  return bzip2OnPath;
}

/**
 * A Duplex that takes `.bz2` bytes and gives the decompressed bytes. Uses the system's `bzip2` in a
 * child process when it is on PATH (about 4× faster than unbzip2-stream, which decodes in JS:
 * bench/RESULTS.md), else unbzip2-stream, so livefeed needs no program at run time.
 */
export function createBzip2Decompressor(where: string, preferProgram = hasBzip2Program()): Duplex {
  return preferProgram
    ? programDecompressor('bzip2', ['--decompress', '--stdout'], where)
    : (unbzip2() as unknown as Duplex);
}

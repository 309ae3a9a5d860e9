import { spawnSync } from 'node:child_process';
import type { Duplex } from 'node:stream';
import lzma from 'lzma-native';
import { programDecompressor } from './decompressProgram.js';

/**
 * Which xz decoder reads JSON dumps: `xz` runs the system's `xz --decompress` in a child process
 * (about twice as fast as lzma-native's bundled liblzma 5.2 on the 2-core reference machine, and on
 * another core than the inserts: bench/RESULTS.md); `lzma-native` decodes in-process on libuv's
 * thread pool. `auto` picks `xz` when it is on PATH, else `lzma-native`.
 */
export type XzDecoder = 'auto' | 'xz' | 'lzma-native';

let xzOnPath: boolean | undefined;

/** True when an `xz` program that decompresses is on PATH (checked once per process). */
export function hasXzProgram(): boolean {
  if (xzOnPath === undefined) {
    const probe = spawnSync('xz', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 });
    xzOnPath = probe.status === 0 && /xz \(XZ Utils\)/.test(probe.stdout?.toString() ?? '');
  }
  return xzOnPath;
}

/** The decoder `auto` resolves to on this machine. */
export function resolveXzDecoder(decoder: XzDecoder = 'auto'): Exclude<XzDecoder, 'auto'> {
  if (decoder !== 'auto') return decoder;
  return hasXzProgram() ? 'xz' : 'lzma-native';
}

/**
 * A Duplex that takes `.xz` bytes and gives the decompressed bytes, with the chosen decoder.
 * Corrupt or truncated input fails the stream: with `xz`, an ArchiveError `<where>: corrupt archive (xz: <its message>)`;
 * with lzma-native, liblzma's error. Destroying the stream stops the decoder (the child is killed).
 */
export function createXzDecompressor(decoder: XzDecoder, where: string): Duplex {
  // Stdin to stdout; xz checks the stream's integrity check (CRC64 in upstream's dumps) itself.
  return resolveXzDecoder(decoder) === 'xz'
    ? programDecompressor('xz', ['--decompress', '--stdout', '--no-warn'], where)
    : (lzma.createDecompressor() as Duplex);
}

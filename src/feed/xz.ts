import { spawnSync } from 'node:child_process';
import { Duplex } from 'node:stream';
import lzma from 'lzma-native';
import { programDecompressor } from './decompressProgram.js';
import { ArchiveError } from './errors.js';

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

/**
 * Archives smaller than this (compressed bytes) are decoded in-process by `auto`: starting an `xz`
 * child costs more than it saves on them. Measured with a 150 MB process, as the sync is, on the
 * 2-core machine at load 8 (bench/RESULTS.md): 2 KB 16 ms with `xz` against 1.2 ms in-process, 48 KB
 * 22 against 14 ms, 174 KB 54 against 51 ms, 352 KB 90 against 90 ms. Most hourly JSON dumps are
 * under it (240 of the 264 of the bench's day).
 */
export const SMALL_XZ_ARCHIVE_BYTES = 128 * 1024;

/**
 * The decoder `auto` resolves to on this machine for an archive of `archiveBytes` compressed bytes
 * (null or absent: unknown, treated as large): `xz` when it is on PATH and the archive is not
 * small, else `lzma-native`. An explicit decoder is kept.
 */
export function resolveXzDecoder(
  decoder: XzDecoder = 'auto',
  archiveBytes?: number | null,
): Exclude<XzDecoder, 'auto'> {
  if (decoder !== 'auto') return decoder;
  if (archiveBytes != null && archiveBytes < SMALL_XZ_ARCHIVE_BYTES) return 'lzma-native';
  return hasXzProgram() ? 'xz' : 'lzma-native';
}

/**
 * A Duplex that takes `.xz` bytes and gives the decompressed bytes, with the chosen decoder.
 * Corrupt or truncated input fails the stream: with `xz`, an ArchiveError `<where>: corrupt archive (xz: <its message>)`;
 * with lzma-native, liblzma's error. Destroying the stream stops the decoder (the child is killed).
 */
export function createXzDecompressor(
  decoder: XzDecoder,
  where: string,
  archiveBytes?: number | null,
): Duplex {
  // Stdin to stdout; xz checks the stream's integrity check (CRC64 in upstream's dumps) itself.
  return resolveXzDecoder(decoder, archiveBytes) === 'xz'
    ? programDecompressor('xz', ['--decompress', '--stdout', '--no-warn'], where)
    : withArchiveErrors(lzma.createDecompressor() as Duplex, where);
}

/**
 * `decoder` behind a Duplex that fails with ArchiveError `<where>: corrupt archive (liblzma: <its
 * message>)`, as the `xz` child does, instead of liblzma's bare "Data is corrupt"; the original is
 * its `cause` (sync/fileRetry.ts fetches such a download again).
 */
function withArchiveErrors(decoder: Duplex, where: string): Duplex {
  const outer = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      if (decoder.write(chunk)) callback();
      else decoder.once('drain', () => callback());
    },
    final(callback) {
      decoder.end(callback);
    },
    read() {
      decoder.resume();
    },
    destroy(error, callback) {
      decoder.destroy();
      callback(error);
    },
  });
  decoder.on('data', (chunk: Buffer) => {
    if (!outer.push(chunk)) decoder.pause();
  });
  decoder.once('end', () => outer.push(null));
  decoder.once('error', (error: Error) =>
    outer.destroy(
      new ArchiveError(`${where}: corrupt archive (liblzma: ${error.message})`, { cause: error }),
    ),
  );
  return outer;
}

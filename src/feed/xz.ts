import { spawn, spawnSync } from 'node:child_process';
import { Duplex } from 'node:stream';
import lzma from 'lzma-native';
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

/** The decoder `auto` resolves to on this machine. */
export function resolveXzDecoder(decoder: XzDecoder = 'auto'): Exclude<XzDecoder, 'auto'> {
  if (decoder !== 'auto') return decoder;
  return hasXzProgram() ? 'xz' : 'lzma-native';
}

/**
 * A Duplex that takes `.xz` bytes and gives the decompressed bytes, with the chosen decoder.
 * Corrupt or truncated input fails the stream: with `xz`, an ArchiveError `<where>: xz: <its message>`;
 * with lzma-native, liblzma's error. Destroying the stream stops the decoder (the child is killed).
 */
export function createXzDecompressor(decoder: XzDecoder, where: string): Duplex {
  return resolveXzDecoder(decoder) === 'xz' ? xzProcess(where) : (lzma.createDecompressor() as Duplex);
}

function xzProcess(where: string): Duplex {
  // Stdin to stdout; xz checks the stream's integrity check (CRC64 in upstream's dumps) itself.
  const child = spawn('xz', ['--decompress', '--stdout', '--no-warn'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const stdin = child.stdin!;
  const stdout = child.stdout!;
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    if (stderr.length < 2000) stderr += text;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let finished = false;
  const duplex = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      if (stdin.write(chunk)) callback();
      else stdin.once('drain', () => callback());
    },
    final(callback) {
      stdin.end(callback);
    },
    read() {
      stdout.resume();
    },
    destroy(error, callback) {
      if (!finished) child.kill();
      callback(error);
    },
  });
  // A write after xz exited (it stopped on corrupt data) fails with EPIPE; the exit status says why.
  stdin.on('error', () => {});
  child.once('error', (error) =>
    duplex.destroy(new ArchiveError(`${where}: cannot run xz: ${error.message}`)),
  );
  stdout.on('data', (chunk: Buffer) => {
    if (!duplex.push(chunk)) stdout.pause();
  });
  stdout.once('end', () => {
    void exited.then((code) => {
      finished = true;
      if (code === 0) duplex.push(null);
      else
        duplex.destroy(
          new ArchiveError(
            `${where}: xz: ${stderr.trim().replace(/^xz: \(stdin\): /, '') || `exit ${code}`}`,
          ),
        );
    });
  });
  return duplex;
}

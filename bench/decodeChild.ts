/**
 * Decompression alone, in its own process: `tsx bench/decodeChild.ts <decoder> <file>`, decoder one
 * of `lzma-native`, `xz-process` (livefeed's xz child-process decoder), `node-liblzma` (only when
 * installed: a comparison, not a dependency), `unbzip2-stream`, `bzip2-process`. Reads the file as
 * a stream, counts the output and prints `{ ms, bytes, cpuMs, maxRssMb }`.
 */
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { Duplex, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import unbzip2 from 'unbzip2-stream';
import { createXzDecompressor } from '../src/feed/xz.js';

const [decoder, file] = process.argv.slice(2);
if (!decoder || !file) throw new Error('usage: decodeChild.ts DECODER FILE');

async function decoderStream(): Promise<Duplex> {
  switch (decoder) {
    case 'lzma-native':
      return createXzDecompressor('lzma-native', file!);
    case 'xz-process':
      return createXzDecompressor('xz', file!);
    case 'node-liblzma': {
      // Optional comparison: `npm install node-liblzma` to include it.
      const name = 'node-liblzma';
      const mod = (await import(name)) as { Unxz: new () => Duplex };
      return new mod.Unxz();
    }
    case 'unbzip2-stream':
      return unbzip2() as unknown as Duplex;
    case 'bzip2-process': {
      const child = spawn('bzip2', ['-dc'], { stdio: ['pipe', 'pipe', 'inherit'] });
      return Duplex.from({ writable: child.stdin, readable: child.stdout });
    }
    default:
      throw new Error(`unknown decoder ${decoder}`);
  }
}

let bytes = 0;
const cpu0 = process.cpuUsage();
const started = performance.now();
const stream = await decoderStream();
await pipeline(
  createReadStream(file, { highWaterMark: 256 * 1024 }),
  stream,
  new Writable({
    write(chunk: Buffer, _e, callback) {
      bytes += chunk.length;
      callback();
    },
  }),
);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${JSON.stringify({
    ms: Math.round(performance.now() - started),
    bytes,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);

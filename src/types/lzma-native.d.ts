declare module 'lzma-native' {
  import type { Transform } from 'node:stream';

  /** Options of liblzma's stream decoders (lzma-native README). */
  interface DecompressorOptions {
    /** Bytes the decoder may allocate; liblzma fails with LZMA_MEMLIMIT_ERROR beyond it. */
    memlimit?: number;
    /** Use a worker thread (default true in lzma-native). */
    synchronous?: boolean;
    threads?: number;
  }
  /** An xz/lzma auto-detecting decompressor as a Transform stream. */
  export function createDecompressor(options?: DecompressorOptions): Transform;
  export function createCompressor(options?: { preset?: number; threads?: number }): Transform;
  const lzma: { createDecompressor: typeof createDecompressor; createCompressor: typeof createCompressor };
  export default lzma;
}

import { createReadStream } from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBzip2Decompressor } from './bzip2.js';
import { createXzDecompressor } from './xz.js';

/**
 * True when the archive at `path` (feed name `name`: `.tar.xz` or `.tar.bz2`) decompresses to its
 * end without error (both formats carry their own checksums); false when it does not. Used to tell
 * a body damaged in transit (fetch it again) from a well-formed archive whose signature does not
 * match it (deterministic: FEED.md, Signatures). Other names are assumed readable.
 * @throws the signal's reason when aborted.
 */
export async function decompresses(path: string, name: string, signal?: AbortSignal): Promise<boolean> {
  const decoder = name.endsWith('.xz')
    ? createXzDecompressor('auto', name)
    : name.endsWith('.bz2')
      ? createBzip2Decompressor(name)
      : undefined;
  if (!decoder) return true;
  const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  try {
    await pipeline(createReadStream(path), decoder, sink, { signal });
    return true;
  } catch {
    if (signal?.aborted) throw signal.reason;
    return false;
  }
}

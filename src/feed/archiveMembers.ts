import type { Readable } from 'node:stream';
import { ArchiveError } from './errors.js';

/**
 * Reads a small tar member (a metadata file such as `REPLICATION_SEQUENCE`) as UTF-8 text.
 * @param limit most bytes accepted; beyond it the stream is destroyed with an ArchiveError
 * @param what names the member in errors (`JSON dump area of packet 7: member TIMESTAMP`)
 */
export function readSmallMember(stream: Readable, limit: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stream.destroy(new ArchiveError(`${what} is larger than ${limit} bytes`));
      else chunks.push(chunk);
    });
    stream.on('error', reject);
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * The integer in a metadata member's text (`186123\n`, FEED.md: a number and a newline).
 * @throws ArchiveError naming the member when it is missing (`text` undefined) or not a number.
 */
export function integerMember(text: string | undefined, name: string, where: string): number {
  if (text === undefined) throw new ArchiveError(`${where}: member ${name} is missing`);
  if (!/^\d+\n?$/.test(text)) {
    throw new ArchiveError(`${where}: member ${name} is not a number: ${JSON.stringify(text.slice(0, 40))}`);
  }
  return Number(text.trim());
}

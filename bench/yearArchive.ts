/**
 * JSON dump archives for the year database (bench/yearDb.ts), made in memory: a ustar archive with
 * upstream's members and order (FEED.md, JSON dump archives, as test/support/archives.ts writes
 * them with the real tar) compressed by liblzma in-process at preset 0. The year has tens of
 * thousands of dumps; a tar and an xz process per dump took most of the generation's time.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import lzma from 'lzma-native';
import type { EntityType } from '../src/feed/entities.js';

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header block for a regular file `name` of `size` bytes. */
function header(name: string, size: number, mtime: number): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(0o644, 8), 100);
  block.write(octal(0, 8), 108);
  block.write(octal(0, 8), 116);
  block.write(octal(size, 12), 124);
  block.write(octal(mtime, 12), 136);
  block.write('        ', 148); // checksum counted as spaces
  block.write('0', 156);
  block.write('ustar\u000000', 257, 'latin1');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}

/** The tar bytes of `members` (name, content), ending with the two zero blocks. */
function tar(members: [string, Buffer][], mtime: number): Buffer {
  const parts: Buffer[] = [];
  for (const [name, content] of members) {
    parts.push(
      header(name, content.length, mtime),
      content,
      Buffer.alloc((512 - (content.length % 512)) % 512),
    );
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/**
 * Writes `<dir>/json-dump-<packet>-<entity>.tar.xz` holding `lines` as `mbdump/<entity>`, with
 * `timestamp` (PostgreSQL text) as TIMESTAMP, and returns its path.
 */
export async function writeYearJsonDump(
  dir: string,
  dump: { packet: number; entity: EntityType; lines: string[]; timestamp: string },
): Promise<string> {
  const text = (value: string) => Buffer.from(value);
  const mtime = Math.floor(Date.parse(dump.timestamp.replace(' ', 'T').replace('+00', 'Z')) / 1000);
  const archive = tar(
    [
      ['TIMESTAMP', text(`${dump.timestamp}\n`)],
      ['COPYING', text('CC0 1.0: https://creativecommons.org/publicdomain/zero/1.0/\n')],
      ['README', text('A livefeed benchmark JSON dump (real-shaped lines, fresh UUIDs).\n')],
      ['REPLICATION_SEQUENCE', text(`${dump.packet}\n`)],
      ['SCHEMA_SEQUENCE', text('31\n')],
      [`mbdump/${dump.entity}`, text(dump.lines.map((line) => `${line}\n`).join(''))],
      ['JSON_DUMPS_SCHEMA_NUMBER', text('1\n')],
    ],
    mtime,
  );
  const path = join(dir, `json-dump-${dump.packet}-${dump.entity}.tar.xz`);
  await pipeline(Readable.from([archive]), lzma.createCompressor({ preset: 0 }), createWriteStream(path));
  return path;
}

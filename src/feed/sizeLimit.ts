import { Transform } from 'node:stream';
import { ArchiveError } from './errors.js';

/** Default decompression limit of one archive in bytes (64 GiB: full dumps of one type run to tens of GB; FEED.md, Sizes). */
export const DEFAULT_MAX_ARCHIVE_BYTES = 64 * 2 ** 30;

/**
 * A pass-through stream for the decompressed side of an archive that fails with an ArchiveError
 * naming `where` once more than `maxBytes` bytes went through (archive bombs; issue 4, Verification).
 * Placed before the tar reader, it counts every byte (headers, skipped members, data), so a bomb in
 * a member that is never read is stopped too.
 */
export function sizeLimit(maxBytes: number, where: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, callback) {
      seen += chunk.length;
      if (seen > maxBytes) {
        callback(
          new ArchiveError(
            `${where}: decompresses to more than ${maxBytes} bytes (size limit, --max-dump-bytes)`,
          ),
        );
      } else callback(null, chunk);
    },
  });
}

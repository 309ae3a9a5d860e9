const NEWLINE = 0x0a;

/**
 * Splits a byte stream into lines on `\n` (0x0A) only, as JSON dumps are written (FEED.md, JSON dump
 * archives): `\r`, U+2028, U+2029 and U+0085 stay inside lines, and as 0x0A never occurs inside a
 * multi-byte UTF-8 sequence, splitting bytes is exact. Lines are passed to `onLine` without the
 * `\n`, in order, synchronously from {@link push}; a line that lies within one chunk is a view of it
 * (no copy; `onLine` must not keep it past the chunk's life), a line spanning chunks is joined once,
 * so a multi-megabyte line costs its own size and no more. A trailing `\n` ends the last line (no
 * empty line after it); empty lines before it are passed as empty buffers.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly onLine: (line: Buffer) => void) {}

  /** Bytes held for a line that is not complete yet. */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  /** Feeds the next chunk; calls `onLine` for every line it completes. */
  push(chunk: Buffer): void {
    let start = 0;
    let end = chunk.indexOf(NEWLINE);
    if (end < 0) {
      this.hold(chunk);
      return;
    }
    if (this.pendingBytes > 0 || this.pending.length > 0) {
      this.pending.push(chunk.subarray(0, end));
      const line = Buffer.concat(this.pending, this.pendingBytes + end);
      this.pending = [];
      this.pendingBytes = 0;
      this.onLine(line);
      start = end + 1;
      end = chunk.indexOf(NEWLINE, start);
    }
    const onLine = this.onLine;
    while (end >= 0) {
      onLine(chunk.subarray(start, end));
      start = end + 1;
      end = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) this.hold(start === 0 ? chunk : chunk.subarray(start));
  }

  /** Ends the input: a last line without `\n` is passed on. */
  end(): void {
    if (this.pending.length === 0) return;
    const line = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (line.length > 0) this.onLine(line);
  }

  private hold(part: Buffer): void {
    this.pending.push(part);
    this.pendingBytes += part.length;
  }
}

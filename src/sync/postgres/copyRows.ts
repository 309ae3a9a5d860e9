import type { Writable } from 'node:stream';

/**
 * `COPY changes ... FROM STDIN` in CSV format whose quote and delimiter are the bytes 0x01 and 0x02:
 * a stored line never holds them (the ingest's check, sync/lineScan.ts `mbidOffset`, refuses any raw
 * control character inside a JSON string, and outside strings only JSON whitespace; a re-escaped
 * line has none left), so the line goes into the row byte for byte, without escaping, quoted so
 * that a `\r` between JSON tokens stays data. The same trick as the benchmark's floor (`\copy`).
 */
export const COPY_CHANGES_SQL =
  "COPY changes (id, packet, entity, position, mbid, data) FROM STDIN WITH (FORMAT csv, DELIMITER E'\\x02', QUOTE E'\\x01')";

const DELIMITER = 0x02;
const QUOTE = 0x01;
const NEWLINE = 0x0a;

/** Bytes of one COPY chunk: large enough that a write per chunk costs nothing, small in memory. */
const CHUNK_BYTES = 1 << 20;

/** True when `line` holds a byte the COPY format above cannot carry unescaped. */
export function hasCopyControlByte(line: Uint8Array): boolean {
  return line.includes(QUOTE) || line.includes(DELIMITER);
}

/**
 * Builds the COPY rows of one JSON dump's changes into chunks of about {@link CHUNK_BYTES} and
 * writes each full chunk to the COPY stream. The line bytes are copied into the chunk (the reader's
 * line is a view valid only during its call); a longer line gets a chunk of its own.
 */
export class CopyRowWriter {
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  private readonly constants: string;

  /** @param packet and @param entity are constants of the dump (entity checked by the caller). */
  constructor(
    private readonly target: Writable,
    packet: number,
    entity: string,
  ) {
    this.constants = `\x02${packet}\x02${entity}\x02`;
  }

  /**
   * Adds the row of change `id` at `position`, its MBID the 36 bytes of `mbidBytes` at `mbidAt`
   * and its data the bytes of `line` (without control bytes, see {@link hasCopyControlByte}).
   * @returns false when the COPY stream asks to wait for 'drain' before more is added.
   */
  add(id: number, position: number, mbidBytes: Uint8Array, mbidAt: number, line: Uint8Array): boolean {
    const head = `${id}${this.constants}${position}\x02`;
    const size = head.length + 36 + 2 + line.length + 2;
    let flowing = true;
    if (this.used + size > this.chunk.length) {
      flowing = this.flush();
      if (size > this.chunk.length) this.chunk = Buffer.allocUnsafe(size);
    }
    const chunk = this.chunk;
    let at = this.used;
    at += chunk.write(head, at, 'latin1');
    chunk.set(mbidBytes.subarray(mbidAt, mbidAt + 36), at);
    at += 36;
    chunk[at++] = DELIMITER;
    chunk[at++] = QUOTE;
    chunk.set(line, at);
    at += line.length;
    chunk[at++] = QUOTE;
    chunk[at++] = NEWLINE;
    this.used = at;
    return flowing;
  }

  /**
   * Writes the rows held to the COPY stream (a new chunk takes their place: the stream keeps the
   * written one until it is sent).
   * @returns false when the stream asks to wait for 'drain'.
   */
  flush(): boolean {
    if (this.used === 0) return true;
    const full = this.chunk.subarray(0, this.used);
    this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
    return this.target.write(full);
  }
}

import { closeSync, mkdtempSync, openSync, read, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';

const readAt = promisify(read);

/**
 * Characters a {@link TextSpool} holds in memory before it moves them to its file: a replication
 * packet of 100,000 rows stages about 60 MB of COPY text, which held in memory took the PostgreSQL
 * sync to 268 MB of RSS (bench/RESULTS.md); a packet of a busy hour is larger still.
 */
export const SPOOL_MEMORY_CHARS = 8 * 1024 * 1024;

/** Characters written to the file at once, once the spool has one. */
const WRITE_CHARS = 1024 * 1024;

/**
 * Text written synchronously in pieces, then read back once as a stream: the COPY text of a
 * replication packet's staged rows, which the archive reader hands over synchronously while a
 * PostgreSQL connection takes it only later, asynchronously (sync/postgres/replicationStaging.ts).
 * Up to `memoryChars` it stays in memory; beyond, everything goes to a temporary file, unlinked as
 * soon as it is opened, so that nothing is left behind whatever ends the process. {@link close}
 * releases the file; reading it through {@link stream} also does.
 */
export class TextSpool {
  private pieces: string[] = [];
  private held = 0;
  private fd: number | undefined;

  constructor(private readonly memoryChars = SPOOL_MEMORY_CHARS) {}

  /** True when nothing was added. */
  get empty(): boolean {
    return this.held === 0 && this.fd === undefined;
  }

  /** Appends `text`. @throws the file system's error when the file cannot be written. */
  add(text: string): void {
    this.pieces.push(text);
    this.held += text.length;
    if (this.held >= (this.fd === undefined ? this.memoryChars : WRITE_CHARS)) this.spill();
  }

  private spill(): void {
    if (this.fd === undefined) {
      const dir = mkdtempSync(join(tmpdir(), 'livefeed-spool-'));
      try {
        this.fd = openSync(join(dir, 'rows'), 'w+', 0o600);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    // write(2) may take less than it is given (a full disk, before it fails): what is left is
    // written again, never dropped.
    const bytes = Buffer.from(this.pieces.join(''), 'utf8');
    for (let at = 0; at < bytes.length; ) at += writeSync(this.fd, bytes, at);
    this.pieces = [];
    this.held = 0;
  }

  /**
   * The text added, in order, once; the spool is empty afterwards (its file closed once read).
   * `chunkPieces`: pieces joined into one chunk when the text is in memory.
   */
  stream(chunkPieces = 10_000): Readable {
    if (this.fd === undefined) {
      const pieces = this.pieces;
      this.pieces = [];
      this.held = 0;
      return Readable.from(
        (function* () {
          for (let at = 0; at < pieces.length; at += chunkPieces)
            yield pieces.slice(at, at + chunkPieces).join('');
        })(),
      );
    }
    if (this.held > 0) this.spill();
    // Read at explicit positions: the descriptor's own offset is at the end, where it was written.
    // The spool keeps the descriptor until the read ends: a stream destroyed before it began
    // reading runs no cleanup of its own, and close() then releases the file.
    return Readable.from(readFile(this.fd, () => this.close()));
  }

  /** Releases the file (when the text was not read). Safe to call again. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.pieces = [];
    this.held = 0;
  }
}

/** The bytes of the file `fd` from its start, in 1 MiB chunks; `done` once read or abandoned. */
async function* readFile(fd: number, done: () => void): AsyncGenerator<Buffer> {
  try {
    for (let position = 0; ; ) {
      const chunk = Buffer.allocUnsafe(1 << 20);
      const { bytesRead } = await readAt(fd, chunk, 0, chunk.length, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield chunk.subarray(0, bytesRead);
    }
  } finally {
    done();
  }
}

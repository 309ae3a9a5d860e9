import { type FileHandle, open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { CompletedDownload } from './partial.js';

/**
 * Told by {@link FeedClient.download} where the body goes while it arrives, so that readers can
 * start on it before the download ends (issue 16: verification and ingest overlap the download).
 */
export interface DownloadTap {
  /**
   * A body starts: its bytes are appended to `path`, which holds `offset` bytes already (a resume);
   * `total` is the whole file's size in bytes when the server announced it, else null.
   */
  begin(path: string, offset: number, total: number | null): void;
  /** `path` now holds `size` bytes. */
  wrote(size: number): void;
}

/** Raised to a reader when the download started over after the reader had read bytes of it. */
export class DownloadRestartedError extends Error {
  override name = 'DownloadRestartedError';
}

/** Bytes read from the file at once. */
const CHUNK = 1 << 20;

/**
 * A download that readers follow as it grows: each {@link reader} gives the file's bytes from the
 * first, waiting at the end of what is on disk until more arrives, and ends when the download is
 * complete. The download never waits for its readers (the bytes wait on disk), so a slow reader
 * holds no memory. A resumed body (`Range`) continues the same bytes; a body that starts over after
 * a reader read past its start fails that reader with {@link DownloadRestartedError} (the caller
 * starts again from a fresh download).
 */
export class StreamedDownload implements DownloadTap {
  #path: string | null = null;
  #size = 0;
  #total: number | null = null;
  #generation = 0;
  /** Offset each body began at, by generation (index 1 is the first body). */
  readonly #beganAt: number[] = [0];
  #done: CompletedDownload | null = null;
  #missing = false;
  #error: unknown = null;
  #wake: () => void = () => {};
  #changed = this.#nextChange();
  #startedResolve!: (started: boolean) => void;
  #startedReject!: (error: unknown) => void;
  /** True once a body starts arriving; false for a 404; rejects when the download fails first. */
  readonly started = new Promise<boolean>((resolve, reject) => {
    this.#startedResolve = resolve;
    this.#startedReject = reject;
  });

  constructor() {
    // Nobody may ask (a 404 of a prefetched file): the failure is reported through finish/fail.
    this.started.catch(() => {});
  }

  /** The whole file's size in bytes as announced (known once {@link started}), else null. */
  get total(): number | null {
    return this.#total;
  }

  begin(path: string, offset: number, total: number | null): void {
    this.#path = path;
    this.#size = offset;
    this.#total = total;
    this.#generation++;
    this.#beganAt.push(offset);
    this.#startedResolve(true);
    this.#notify();
  }

  wrote(size: number): void {
    this.#size = size;
    this.#notify();
  }

  /** The download ended: the whole file at `done.path`, or a 404. */
  finish(done: CompletedDownload | 'missing'): void {
    if (done === 'missing') {
      this.#missing = true;
      this.#startedResolve(false);
    } else {
      this.#done = done;
      this.#path = done.path;
      this.#size = done.size;
    }
    this.#notify();
  }

  /** The download failed for good: readers fail with `error`. */
  fail(error: unknown): void {
    this.#error = error;
    this.#startedReject(error);
    this.#notify();
  }

  /** A new stream of the file's bytes from the first to the last (see the class). */
  reader(): Readable {
    return Readable.from(this.#follow(), { objectMode: false });
  }

  #nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  #notify(): void {
    const wake = this.#wake;
    this.#changed = this.#nextChange();
    wake();
  }

  /** The file, or undefined when the part file is gone and the final path is not known yet. */
  async #open(): Promise<FileHandle | undefined> {
    const done = this.#done;
    try {
      return await open(done?.path ?? this.#path!, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && done === null) return undefined;
      throw error;
    }
  }

  async *#follow(): AsyncGenerator<Buffer> {
    let handle: FileHandle | undefined;
    let generation = 0;
    let position = 0;
    try {
      for (;;) {
        // Taken before any await: a change while this reader waits on the disk is not missed.
        const changed = this.#changed;
        if (this.#error !== null) throw this.#error;
        if (this.#missing) throw new Error('the file is not on the feed (404)');
        if (this.#path !== null && generation !== this.#generation) {
          // A new body: a resume continues our bytes; a fresh start after we read some does not.
          if (Math.min(...this.#beganAt.slice(generation + 1)) < position)
            throw new DownloadRestartedError('the download started over while it was being read');
          generation = this.#generation;
          await handle?.close();
          handle = undefined;
        }
        if (position < this.#size) {
          handle ??= await this.#open();
          if (!handle) {
            // The finished part file was just renamed to its final path: finish() says where.
            await changed;
            continue;
          }
          const buffer = Buffer.allocUnsafe(Math.min(CHUNK, this.#size - position));
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
          if (bytesRead === 0) throw new Error(`${this.#path}: the file ended before the bytes written`);
          position += bytesRead;
          yield bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
          continue;
        }
        if (this.#done !== null) return;
        await changed;
      }
    } finally {
      await handle?.close();
    }
  }
}

import { createHash, type Hash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';

/**
 * An interrupted download kept on disk so that the next attempt (in this process or after a crash)
 * asks only for the missing bytes with `Range` (RFC 9110 §14). The bytes live in
 * `<tmpDir>/partial/<key>.part` with a JSON sidecar `<key>.json` naming the feed path, the full size
 * and the validator (ETag or Last-Modified) of the response they came from; both are removed once
 * the file is complete, which is then renamed to a fresh `<tmpDir>/<uuid>.download`. Only files of
 * at least `sidecarMinBytes` (default {@link SIDECAR_MIN_BYTES}) get a sidecar: a smaller one is
 * fetched again whole after a crash (within one process every file resumes, from what it holds in
 * memory).
 */

/**
 * Smallest announced size for which a download writes its sidecar, by default. A day of catch-up
 * downloads 288 archives, most of a few KB; creating and deleting a sidecar for each took about 5 %
 * of the day's `sync --once` on the benchmark's machine, whose ext4 without a journal makes each
 * new file skip the inodes deleted in the last minutes (bench/RESULTS.md, issue 16). A crash costs
 * at most a megabyte of transfer more.
 */
export const SIDECAR_MIN_BYTES = 1 << 20;

/** What the sidecar records. */
interface PartialMeta {
  /** Feed-root-relative path. */
  path: string;
  /** Full size in bytes from Content-Length / Content-Range; null when the server sent none. */
  total: number | null;
  /** Strong ETag or Last-Modified of the response, for If-Range; null when the server gave neither. */
  validator: string | null;
  /** Whether the server announced `Accept-Ranges: bytes`. */
  ranges: boolean;
}

/** A completed download. */
export interface CompletedDownload {
  path: string;
  /** Bytes. */
  size: number;
  /** SHA-256, lowercase hex. */
  sha256: string;
}

/** Headers of a response, as Node's http gives them (feed/httpGet.ts). */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

function header(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A mismatch that makes the kept bytes useless (file changed, bad Content-Range): start again. */
export class PartialRestart extends Error {
  override name = 'PartialRestart';
}

/**
 * The kept bytes of one feed file. Use: {@link open} once, then per attempt {@link requestHeaders},
 * {@link begin} with the response, pipe the body into {@link writer}, then {@link complete}.
 */
export class PartialDownload {
  readonly #file: string;
  readonly #metaFile: string;
  #meta: PartialMeta | null = null;
  /** True when a sidecar may be on disk (written by this object, or found by {@link open}). */
  #sidecar = false;
  #offset = 0;
  #hash: Hash = createHash('sha256');

  private constructor(
    readonly tmpDir: string,
    readonly feedPath: string,
    private readonly sidecarMinBytes: number,
  ) {
    const key = createHash('sha256').update(feedPath).digest('hex').slice(0, 24);
    this.#file = join(tmpDir, 'partial', `${key}.part`);
    this.#metaFile = join(tmpDir, 'partial', `${key}.json`);
  }

  /**
   * The kept download of `feedPath` under `tmpDir`, resuming bytes an earlier process left (their
   * hash is recomputed from disk); starts empty when there are none or they cannot be resumed.
   * `sidecarMinBytes`: smallest announced size whose bytes may resume in another process (see the
   * module's comment).
   */
  static async open(
    tmpDir: string,
    feedPath: string,
    sidecarMinBytes = SIDECAR_MIN_BYTES,
  ): Promise<PartialDownload> {
    const partial = new PartialDownload(tmpDir, feedPath, sidecarMinBytes);
    await mkdir(join(tmpDir, 'partial'), { recursive: true });
    await partial.#load();
    return partial;
  }

  /** The file the bytes are appended to (renamed by {@link complete}). */
  get path(): string {
    return this.#file;
  }

  /** The whole file's size in bytes as the response announced it (Content-Length of a 200), or null. */
  get total(): number | null {
    return this.#meta?.total ?? null;
  }

  /** Bytes kept so far. */
  get offset(): number {
    return this.#offset;
  }

  async #load(): Promise<void> {
    const text = await readFile(this.#metaFile, 'utf8').catch(() => null);
    // A sidecar that is there but unreadable is removed with the bytes by discard().
    this.#sidecar = text !== null;
    const meta = text === null ? null : parseMeta(text);
    const size = await stat(this.#file).then(
      (s) => s.size,
      () => 0,
    );
    if (!meta || meta.path !== this.feedPath || !this.#resumable(meta) || size === 0) {
      await this.discard();
      return;
    }
    this.#meta = meta;
    this.#offset = size;
    for await (const chunk of createReadStream(this.#file)) this.#hash.update(chunk as Buffer);
  }

  #resumable(meta: PartialMeta | null): meta is PartialMeta {
    return !!meta && meta.ranges && meta.validator !== null && meta.total !== null;
  }

  /** `Range` and `If-Range` for the next request when kept bytes can be resumed; else none. */
  requestHeaders(): Record<string, string> {
    if (this.#offset === 0 || !this.#resumable(this.#meta)) return {};
    return { range: `bytes=${this.#offset}-`, 'if-range': this.#meta.validator! };
  }

  /**
   * Takes the head of a 200 or 206 response: a 200 starts over (the server ignored or refused the
   * range), a 206 must continue exactly at the kept offset with the same total.
   * @throws PartialRestart (kept bytes dropped) when a 206 does not fit them.
   */
  async begin(status: number, headers: ResponseHeaders): Promise<void> {
    const length = Number(header(headers, 'content-length'));
    if (status === 206) {
      const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header(headers, 'content-range') ?? '');
      if (!match || Number(match[1]) !== this.#offset || Number(match[3]) !== this.#meta?.total) {
        await this.discard();
        throw new PartialRestart(
          `206 does not continue the kept ${this.#offset} bytes (${header(headers, 'content-range')})`,
        );
      }
      return;
    }
    await this.discard();
    const etag = header(headers, 'etag');
    this.#meta = {
      path: this.feedPath,
      total: Number.isSafeInteger(length) && length >= 0 ? length : null,
      // A weak ETag may not be used in If-Range (RFC 9110 §13.1.5); Last-Modified may.
      validator: etag && !etag.startsWith('W/') ? etag : (header(headers, 'last-modified') ?? null),
      ranges: /\bbytes\b/i.test(header(headers, 'accept-ranges') ?? ''),
    };
    if (this.#resumable(this.#meta) && this.#meta.total! >= this.sidecarMinBytes) {
      await writeFile(this.#metaFile, JSON.stringify(this.#meta));
      this.#sidecar = true;
    }
  }

  /**
   * A sink for the body: appends to the kept file and hashes each chunk once it is written, so the
   * offset and hash always match the bytes on disk, whatever interrupts the transfer. `onWritten`
   * is told the bytes on disk after each chunk.
   */
  writer(onWritten?: (offset: number) => void): Writable {
    let handle: FileHandle | undefined;
    return new Writable({
      construct: (callback) => {
        open(this.#file, 'a').then((h) => {
          handle = h;
          callback();
        }, callback);
      },
      write: (chunk: Buffer, _encoding, callback) => {
        handle!.write(chunk).then(() => {
          this.#hash.update(chunk);
          this.#offset += chunk.length;
          onWritten?.(this.#offset);
          callback();
        }, callback);
      },
      destroy: (error, callback) => {
        if (!handle) return callback(error);
        handle.close().then(
          () => callback(error),
          () => callback(error),
        );
      },
    });
  }

  /**
   * Checks the kept bytes against the announced size and, when whole, moves them to a fresh
   * `<tmpDir>/<uuid>.download` that the caller owns.
   * @returns the file, or `short` with the byte counts when bytes are missing (kept for a resume).
   * @throws PartialRestart (kept bytes dropped) when there are more bytes than announced.
   */
  async complete(): Promise<CompletedDownload | { short: true; size: number; expected: number }> {
    const expected = this.#meta?.total ?? null;
    if (expected !== null && this.#offset < expected) return { short: true, size: this.#offset, expected };
    if (expected !== null && this.#offset > expected) {
      const size = this.#offset;
      await this.discard();
      throw new PartialRestart(`body is ${size} bytes, more than the ${expected} announced`);
    }
    const target = join(this.tmpDir, `${randomUUID()}.download`);
    await rename(this.#file, target);
    await this.#removeSidecar();
    const done = { path: target, size: this.#offset, sha256: this.#hash.digest('hex') };
    this.#reset();
    return done;
  }

  /** Drops the kept bytes and sidecar. */
  async discard(): Promise<void> {
    await removeIfThere(this.#file);
    await this.#removeSidecar();
    this.#reset();
  }

  async #removeSidecar(): Promise<void> {
    if (!this.#sidecar) return;
    await removeIfThere(this.#metaFile);
    this.#sidecar = false;
  }

  #reset(): void {
    this.#meta = null;
    this.#offset = 0;
    this.#hash = createHash('sha256');
  }
}

function parseMeta(text: string): PartialMeta | null {
  try {
    return JSON.parse(text) as PartialMeta;
  } catch {
    return null;
  }
}

/** Deletes the file at `path`; none there is fine (one `unlink`: `rm` would `lstat` it first). */
async function removeIfThere(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FeedFileRow } from '../db/queries.js';
import type { Reads } from '../db/reads.js';
import type { FeedClient } from '../feed/client.js';
import { safeMessage } from '../feed/errors.js';
import { signaturePath } from '../feed/protocol/urls.js';
import { type OpenFeedFile, openFeedFile, resolveInside } from '../files/local.js';
import type { Logger } from '../logger.js';

/** Where {@link FileSource} finds feed files. */
export interface FileSourceOptions {
  /** The store's reads (SQLite or PostgreSQL): `feed_files` is the allowlist. */
  reads: Pick<Reads, 'feedFileByName'>;
  /**
   * Data directory: kept copies are `<dataDir>/<feed_files.stored_path>`, downloads go to
   * `<dataDir>/tmp`. Kept copies are on the disk of the machine that synced: a server elsewhere
   * over the same PostgreSQL database has none, and fetches from the feed (`upstream`) or answers gone.
   */
  dataDir: string;
  /**
   * Client of the feed the files came from, holding the upstream token (added server side, never
   * shown). Absent: no upstream access, files no longer kept are gone.
   */
  upstream?: FeedClient;
  logger: Logger;
}

/**
 * A feed file found for a request:
 * - `file`: open and ready to stream (the caller passes it to `sendFile`, which closes it), `etag`
 *   the quoted SHA-256 of the bytes;
 * - `unknown`: not a file this instance stored: no `feed_files` row, or the signature of a stored
 *   archive the feed had none for (404 at sync time; `row` is then the archive's);
 * - `gone`: stored once, no longer kept here, and not obtainable from the feed;
 * - `unavailable`: not kept here and the feed failed to deliver the exact bytes (try later).
 */
export type FoundFile =
  | {
      kind: 'file';
      name: string;
      row: FeedFileRow;
      file: OpenFeedFile;
      etag: string;
      from: 'local' | 'upstream';
    }
  | { kind: 'unknown'; row?: FeedFileRow }
  | { kind: 'gone'; name: string; why: GoneWhy }
  | { kind: 'unavailable'; name: string };

/** Why a stored file cannot be served: no token to fetch it with, or the feed no longer has it. */
export type GoneWhy = 'no-upstream' | 'not-upstream';

/**
 * The body of a 410 for a file `found` gone: what is missing and what would bring it back. A
 * server never had the archive when another machine's sync stored it (README, File links and
 * mirror), so it says "not on this server's disk", not "no longer kept".
 */
export function goneText(found: { name: string; why: GoneWhy }): string {
  return found.why === 'no-upstream'
    ? `${found.name} is not on this server's disk (synced without --keep-files, pruned, or synced on another machine), and this server has no token to fetch it from the feed (LIVEFEED_TOKEN_FILE; README, File links and mirror).\n`
    : `${found.name} is not on this server's disk, and the feed no longer has it.\n`;
}

/**
 * Finds the exact upstream bytes of stored feed files (issue 4, Files and links): the kept copy
 * under the data directory when there is one, else a fresh download from the feed through the
 * {@link FeedClient} (token added server side), accepted only when its SHA-256 equals the one
 * recorded at sync time. Only names present in `feed_files` are ever looked for: the table is the
 * allowlist, so a request path cannot reach any other file.
 */
export class FileSource {
  readonly #options: FileSourceOptions;

  constructor(options: FileSourceOptions) {
    this.#options = options;
  }

  /**
   * Looks up `name`, a path under the feed root of an archive (`json-dumps/json-dump-N/artist.tar.xz`,
   * `replication-N-v2.tar.bz2`) or of its signature (the same + `.asc`).
   * @throws file system errors other than a missing file.
   */
  async find(name: string, signal?: AbortSignal): Promise<FoundFile> {
    const signature = name.endsWith('.asc');
    const archive = signature ? name.slice(0, -'.asc'.length) : name;
    const row = await this.#options.reads.feedFileByName(archive);
    if (!row) return { kind: 'unknown' };
    if (signature && row.signatureStoredPath === null) return { kind: 'unknown', row };
    const local = await this.#local(row, signature);
    if (local) return { kind: 'file', name, row, ...local, from: 'local' };
    if (!this.#options.upstream) return { kind: 'gone', name, why: 'no-upstream' };
    return this.#fromUpstream(this.#options.upstream, row, signature, signal);
  }

  /** The kept copy, if present and (for an archive) of the recorded size. */
  async #local(
    row: FeedFileRow,
    signature: boolean,
  ): Promise<{ file: OpenFeedFile; etag: string } | undefined> {
    const stored = signature ? row.signatureStoredPath : row.storedPath;
    if (stored === null) return undefined;
    const path = resolveInside(this.#options.dataDir, stored);
    if (signature) {
      // Signatures are a few hundred bytes: hashing them for the ETag costs nothing.
      const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      const file = bytes && (await openFeedFile(path));
      return file ? { file, etag: etagOf(bytes) } : undefined;
    }
    const file = await openFeedFile(path);
    if (!file) return undefined;
    if (file.size !== row.size) {
      await file.handle.close();
      this.#options.logger.warn(
        { event: 'kept-file-damaged', file: row.name, size: file.size, expected: row.size },
        `kept copy of ${row.name} has ${file.size} bytes, expected ${row.size}; not served`,
      );
      return undefined;
    }
    return { file, etag: `"${row.sha256}"` };
  }

  async #fromUpstream(
    client: FeedClient,
    row: FeedFileRow,
    signature: boolean,
    signal?: AbortSignal,
  ): Promise<FoundFile> {
    const name = signature ? signaturePath(row.name) : row.name;
    // A folder per request: the client keeps resumable partial downloads keyed by feed path, and two
    // requests (or the sync) fetching one file at once must not share them.
    const tmpDir = join(this.#options.dataDir, 'tmp', `serve-${randomUUID()}`);
    let tmpPath: string;
    try {
      let etag: string;
      if (signature) {
        const text = await client.text(name, signal);
        if (text === null) return { kind: 'gone', name, why: 'not-upstream' };
        await mkdir(tmpDir, { recursive: true });
        tmpPath = join(tmpDir, 'signature.asc');
        await writeFile(tmpPath, text);
        etag = etagOf(Buffer.from(text));
      } else {
        const download = await client.download(name, tmpDir, signal);
        if (download.status === 'missing') return { kind: 'gone', name, why: 'not-upstream' };
        tmpPath = download.path;
        if (download.sha256 !== row.sha256 || download.size !== row.size) {
          this.#options.logger.error(
            { event: 'upstream-file-changed', file: name, sha256: download.sha256, expected: row.sha256 },
            `the feed now serves other bytes for ${name} than were verified at sync time; not served`,
          );
          return { kind: 'unavailable', name };
        }
        etag = `"${row.sha256}"`;
      }
      const file = await openFeedFile(tmpPath);
      if (!file) return { kind: 'unavailable', name };
      return { kind: 'file', name, row, file, etag, from: 'upstream' };
    } catch (error) {
      if (signal?.aborted) {
        this.#options.logger.debug(
          { event: 'upstream-file-abandoned', file: name },
          `client left; ${name} not fetched`,
        );
        return { kind: 'unavailable', name };
      }
      // FeedClient errors carry redacted URLs only; the client gets no detail at all.
      this.#options.logger.error(
        { event: 'upstream-file-failed', file: name, err: safeMessage(error) },
        `cannot fetch ${name} from the feed`,
      );
      return { kind: 'unavailable', name };
    } finally {
      // The open handle keeps the bytes readable; unlinking now leaves nothing behind, even on a crash mid-stream.
      await rm(tmpDir, { recursive: true, force: true });
    }
  }
}

function etagOf(bytes: Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('hex')}"`;
}

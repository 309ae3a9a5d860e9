import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DownloadResult, FeedClient } from '../feed/client.js';
import { decompresses } from '../feed/integrity.js';
import { signaturePath } from '../feed/protocol/urls.js';
import { keptPath } from '../files/kept.js';
import type { FeedFileRecord } from './ingest.js';
import { SignatureError, type Verifier } from './verifier.js';

/** A downloaded, checked archive waiting to be stored. */
export interface FetchedFile {
  /** Temporary path of the archive; {@link keep} moves it into the data directory. */
  tmpPath: string;
  record: FeedFileRecord;
  signature: string | null;
}

/**
 * One file of the feed to fetch: `name` (feed-root-relative) of `packet`, downloaded under
 * `<dataDir>/tmp`; `download` (in each fetch's options) is the download begun ahead of its turn
 * (prefetch.ts), taken instead of fetching.
 */
export interface FileFetch {
  name: string;
  packet: number;
  dataDir: string;
  signal?: AbortSignal;
  now: () => Date;
}

/** A download begun ahead of its turn and its `.asc` (streamedFetch.ts `StartedDownload`). */
export interface AheadDownload {
  /** Settles when the download ends; a rejection is handled (reported through the readers). */
  done: Promise<DownloadResult>;
  /**
   * The `.asc` text (null when the feed has none), asked for as soon as the archive is known to
   * exist (never for a 404); a rejection is handled (reported to whoever awaits it).
   */
  signature: Promise<string | null>;
}

/**
 * Downloads `name` and its `.asc` from the feed and checks the signature before anything is
 * stored (FEED.md, Signatures). Returns null when the archive is missing (404). A signature that
 * does not match a body that does not decompress either is reported `damaged` (fetch it again).
 * @throws FeedAuthError / FeedHttpError / FeedNetworkError from the client, SignatureError in fail mode.
 */
export async function fetchFile(
  client: FeedClient,
  verifier: Verifier,
  options: FileFetch & { download?: AheadDownload },
): Promise<FetchedFile | null> {
  const { name, packet, dataDir, signal } = options;
  const started = options.download;
  const download = started ? await started.done : await client.download(name, join(dataDir, 'tmp'), signal);
  if (download.status === 'missing') return null;
  try {
    const signature = started ? await started.signature : await client.text(signaturePath(name), signal);
    const verdict = await verifier.check(download.path, name, signature, signal);
    return {
      tmpPath: download.path,
      signature,
      record: {
        name,
        packet,
        size: download.size,
        sha256: download.sha256,
        signature: verdict.status,
        fingerprint: verdict.fingerprint,
        fetchedAt: options.now().toISOString(),
        storedPath: join('files', name),
        signatureStoredPath: signature === null ? null : join('files', signaturePath(name)),
      },
    };
  } catch (error) {
    let damaged = false;
    try {
      damaged =
        error instanceof SignatureError &&
        error.kind === 'mismatch' &&
        !(await decompresses(download.path, name, signal));
    } finally {
      rmSync(download.path, { force: true });
    }
    if (damaged) {
      throw new SignatureError(
        `${(error as Error).message}; the body does not decompress either, so it was damaged in transit`,
        'damaged',
        name,
      );
    }
    throw error;
  }
}

/** Moves a fetched archive (and its signature) to its kept path; synchronous so it can run just before COMMIT. */
export function keep(dataDir: string, file: FetchedFile): void {
  const target = keptPath(dataDir, file.record.name);
  mkdirSync(dirname(target), { recursive: true });
  // A signature kept from an earlier copy must not sit beside a file the feed now serves without one.
  if (file.signature !== null) writeFileSync(`${target}.asc`, file.signature);
  else rmSync(`${target}.asc`, { force: true });
  renameSync(file.tmpPath, target);
}

/** Removes a fetched archive that was not kept. */
export function discard(file: FetchedFile): void {
  rmSync(file.tmpPath, { force: true });
}

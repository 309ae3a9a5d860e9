import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { DownloadResult, FeedClient } from '../feed/client.js';
import { decompresses } from '../feed/integrity.js';
import { signaturePath } from '../feed/protocol/urls.js';
import { StreamedDownload } from '../feed/streamedDownload.js';
import type { AheadDownload, FetchedFile, FileFetch } from './fetchFile.js';
import { SignatureError, type Verdict, type Verifier } from './verifier.js';

/**
 * The streamed form of fetchFile.ts (issue 16): the archive is read while it downloads, by the
 * signature check and by the store at the same time, instead of download, then verify, then store.
 * The store writes inside its transaction and commits only once {@link StreamedFile.settled} has
 * resolved: the whole file arrived and its signature verified (FEED.md, Signatures), so nothing
 * unverified is ever visible.
 */

/** A download under way (perhaps ahead of its turn, see prefetch.ts) that readers can follow. */
export interface StartedDownload extends AheadDownload {
  name: string;
  tap: StreamedDownload;
}

/**
 * Starts downloading `name` into `<dataDir>/tmp` (see FeedClient.download) without waiting for it,
 * and its `.asc` once the archive's body starts: a prefetched file's signature is on hand when its
 * turn comes, one round trip to the feed fewer per file on the critical path.
 */
export function startDownload(
  client: FeedClient,
  name: string,
  dataDir: string,
  signal?: AbortSignal,
): StartedDownload {
  const tap = new StreamedDownload();
  const done = client.download(name, join(dataDir, 'tmp'), signal, tap).then(
    (result) => {
      tap.finish(result.status === 'missing' ? 'missing' : result);
      return result;
    },
    (error: unknown) => {
      tap.fail(error);
      throw error;
    },
  );
  done.catch(() => {});
  const signature = tap.started.then((started) =>
    started ? client.text(signaturePath(name), signal) : null,
  );
  signature.catch(() => {});
  return { name, tap, done, signature };
}

/** An archive being downloaded, read and verified at once. */
export interface StreamedFile {
  /** The archive's bytes as they arrive (one reader). */
  archive: Readable;
  /** The archive's size in bytes as the feed announced it, else null (chooses the xz decoder). */
  archiveBytes: number | null;
  /**
   * The downloaded file, its record and signature once the download ended and the signature was
   * checked. Rejects with SignatureError in `fail` mode, or the download's error.
   */
  settled: Promise<FetchedFile>;
  /** What a failed store should report: the signature's failure first, then the download's, else `error`. */
  explain(error: unknown): Promise<unknown>;
  /** Waits for the download's end and removes its file unless it was kept. */
  discard(): Promise<void>;
}

/**
 * Takes `download` (or begins a download of `options.name`) and, once its body arrives and its
 * `.asc` (asked for by {@link startDownload}) is in, starts the signature check over the bytes as
 * they come. Resolves null for a 404.
 * @throws FeedAuthError / FeedHttpError / FeedNetworkError for the archive or its `.asc`.
 */
export async function streamFile(
  client: FeedClient,
  verifier: Verifier,
  options: FileFetch & { download?: StartedDownload },
): Promise<StreamedFile | null> {
  const { name, signal } = options;
  const download = options.download ?? startDownload(client, name, options.dataDir, signal);
  const discard = async () => {
    const [result] = await Promise.allSettled([download.done]);
    if (result.status === 'fulfilled' && result.value.status === 'ok')
      rmSync(result.value.path, { force: true });
  };
  let signature: string | null;
  try {
    if (!(await download.tap.started)) return null;
    signature = await download.signature;
  } catch (error) {
    await discard();
    throw error;
  }
  const verifying = verifier.check(download.tap.reader(), name, signature, signal);
  verifying.catch(() => {});
  const settled = Promise.all([download.done, verifying]).then(([result, verdict]) =>
    fetched(options, result, verdict, signature),
  );
  settled.catch(() => {});
  return {
    archive: download.tap.reader(),
    archiveBytes: download.tap.total,
    settled,
    discard,
    explain: async (error) => {
      const [downloaded, verified] = await Promise.allSettled([download.done, verifying]);
      if (verified.status === 'rejected' && verified.reason instanceof SignatureError) {
        const body = downloaded.status === 'fulfilled' ? downloaded.value : undefined;
        return body?.status === 'ok' ? damaged(verified.reason, body.path, name, signal) : verified.reason;
      }
      return downloaded.status === 'rejected' ? downloaded.reason : error;
    },
  };
}

/**
 * A signature that does not match a body that does not decompress either was damaged in transit
 * (fetched again); any other signature failure stands (FEED.md, Signatures). The store's own error
 * cannot tell: the failed check may have stopped it before it read the damage.
 */
async function damaged(
  failure: SignatureError,
  path: string,
  name: string,
  signal?: AbortSignal,
): Promise<SignatureError> {
  if (failure.kind !== 'mismatch' || (await decompresses(path, name, signal))) return failure;
  return new SignatureError(
    `${failure.message}; the body does not decompress either, so it was damaged in transit`,
    'damaged',
    failure.file,
  );
}

function fetched(
  options: { name: string; packet: number; now: () => Date },
  result: DownloadResult,
  verdict: Verdict,
  signature: string | null,
): FetchedFile {
  if (result.status !== 'ok') throw new Error(`${options.name} is no longer on the feed (404)`);
  const { name, packet } = options;
  return {
    tmpPath: result.path,
    signature,
    record: {
      name,
      packet,
      size: result.size,
      sha256: result.sha256,
      signature: verdict.status,
      fingerprint: verdict.fingerprint,
      fetchedAt: options.now().toISOString(),
      storedPath: join('files', name),
      signatureStoredPath: signature === null ? null : join('files', signaturePath(name)),
    },
  };
}

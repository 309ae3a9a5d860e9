import { FeedNetworkError, safeMessage } from '../feed/errors.js';
import type { Logger } from '../logger.js';
import { SignatureError } from './verifier.js';

/**
 * Per-file retry policy of the sync (issue 5): how a file that failed is retried, when a broken
 * download is fetched again, and when a pass gives up because the feed is down.
 */

/** Downloads of one file per pass when its body turns out unreadable (corrupt in transit). */
export const MAX_DOWNLOADS_PER_PASS = 3;

/** Files in a row failing with a transport error (after the client's own retries) that end a pass. */
export const MAX_NETWORK_FAILURES_IN_A_ROW = 3;

/** First delay before a failed file is retried in follow mode, doubled per failure up to {@link RETRY_CAP_MS}. */
export const RETRY_BASE_MS = 60_000;
/** Longest delay between retries of a failed file (JSON dumps appear ~30 min after their packet). */
export const RETRY_CAP_MS = 30 * 60_000;

/**
 * When a file that has failed `attempts` times (≥ 1) is retried next by follow mode: `failedAt` +
 * 1 min × 2^(attempts − 1), at most 30 min. ISO 8601.
 */
export function nextRetryAt(attempts: number, failedAt: Date): string {
  const delay = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
  return new Date(failedAt.getTime() + delay).toISOString();
}

// The xz program's verdicts (src/feed/xz.ts reports them as `<where>: xz: <message>`), the
// replication reader's wrapper of decompression and tar errors (`corrupt archive (...)`), tar-stream's
// framing errors and unbzip2-stream's early end; lzma-native and bzip2 errors are told by name.
const UNREADABLE_MESSAGE =
  /: xz: |: corrupt archive \(|compressed data is corrupt|unexpected end of input|file format not recognized|invalid (tar )?header|unexpected end of data|input stream ended prematurely/i;

/**
 * True for errors that mean the downloaded bytes are broken rather than the file: the body does not
 * decompress (xz program or `LZMA_*` errors, bzip2 and tar framing errors), the `.asc` is not a
 * readable signature (cut), or the signature does not match a body that does not decompress
 * (FEED.md, Signatures). Such a file is fetched again, a bounded number of times. A well-formed
 * signature that does not verify, by an unknown key or with a refused algorithm is deterministic:
 * not fetched again in the same pass, only on the failed-file backoff.
 */
export function isUnreadableDownload(error: unknown): boolean {
  if (error instanceof SignatureError) return error.transient;
  if (!(error instanceof Error) || error.name === 'AbortError') return false;
  if (/^LZMA_/.test(error.name) || error.name === 'Bzip2Error') return true;
  // A body that started over while the store read it (streamedDownload.ts): read a fresh download.
  if (error.name === 'DownloadRestartedError') return true;
  if (error.cause !== undefined && isUnreadableDownload(error.cause)) return true;
  // A decoder that stops on bad input can tear its pipeline down before its own error is seen.
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_PREMATURE_CLOSE') return true;
  return UNREADABLE_MESSAGE.test(error.message);
}

/**
 * Runs `work` (download, check and store one file) again while it fails with
 * {@link isUnreadableDownload}, up to {@link MAX_DOWNLOADS_PER_PASS} downloads; each run must
 * start from a fresh download. Other errors, and the last one, propagate.
 */
export async function withRedownload<T>(
  file: { packet: number; name: string },
  logger: Logger,
  work: () => Promise<T>,
): Promise<T> {
  for (let download = 1; ; download++) {
    try {
      return await work();
    } catch (error) {
      if (download >= MAX_DOWNLOADS_PER_PASS || !isUnreadableDownload(error)) throw error;
      logger.warn(
        { event: 'redownload', packet: file.packet, file: file.name, download, err: safeMessage(error) },
        `${file.name} is unreadable as downloaded (${safeMessage(error)}); downloading it again`,
      );
    }
  }
}

const networkFailures = new WeakMap<object, number>();

/** Raised when {@link MAX_NETWORK_FAILURES_IN_A_ROW} files in a row could not be fetched: the feed is down. */
export class FeedUnavailableError extends Error {
  override name = 'FeedUnavailableError';
}

/**
 * Counts transport failures of consecutive files within one pass (`pass` is any object for the
 * pass, e.g. its report). After {@link MAX_NETWORK_FAILURES_IN_A_ROW} in a row the pass stops
 * instead of trying every remaining file against a feed that is down; follow mode then backs off.
 * @throws FeedUnavailableError naming the last failure.
 */
export function noteFileOutcome(pass: object, error?: unknown): void {
  if (!(error instanceof FeedNetworkError)) {
    networkFailures.set(pass, 0);
    return;
  }
  const count = (networkFailures.get(pass) ?? 0) + 1;
  networkFailures.set(pass, count);
  if (count >= MAX_NETWORK_FAILURES_IN_A_ROW) {
    throw new FeedUnavailableError(
      `the feed looks unavailable: ${count} files in a row failed; last: ${error.message}`,
    );
  }
}

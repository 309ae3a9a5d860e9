import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher, request } from 'undici';
import { FeedAuthError, FeedHttpError, FeedNetworkError, safeMessage } from './errors.js';
import { feedUrl, parseReplicationInfo, redactUrl } from './urls.js';

/** Retry policy for transient failures. Delays in milliseconds. */
export interface RetryPolicy {
  /** Attempts per request, including the first. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Default: 5 attempts, 1 s doubling to 60 s, ±50% jitter. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 1000, maxDelayMs: 60_000 };

/** Options of {@link FeedClient}. */
export interface FeedClientOptions {
  feedRoot: string;
  token?: string;
  retry?: Partial<RetryPolicy>;
  /** Milliseconds to connect, to receive headers, and between body chunks. Default 30 000. */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  /** Told about each retry; `url` is redacted. */
  onRetry?: (info: { url: string; attempt: number; delayMs: number; reason: string }) => void;
}

/** Result of {@link FeedClient.download}: the file, or `missing` for a 404. */
export type DownloadResult =
  | { status: 'ok'; path: string; size: number; sha256: string }
  | { status: 'missing'; body: string };

const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

class RetryableError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

function retryAfter(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = headers['retry-after'];
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const seconds = Number(text);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * HTTP access to one feed root (FEED.md, Deployments and URLs) with the token added to every
 * request and never shown: errors and callbacks carry redacted URLs. Transient failures
 * (network errors, timeouts, 408/429/5xx, truncated bodies) are retried with exponential backoff
 * and jitter, honouring Retry-After; 400/403 throw {@link FeedAuthError} at once.
 */
export class FeedClient {
  readonly feedRoot: string;
  readonly #token: string | undefined;
  readonly #retry: RetryPolicy;
  readonly #dispatcher: Dispatcher;
  readonly #onRetry: FeedClientOptions['onRetry'];

  constructor(options: FeedClientOptions) {
    this.feedRoot = options.feedRoot;
    this.#token = options.token;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    const timeout = options.timeoutMs ?? 30_000;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({ connect: { timeout }, headersTimeout: timeout, bodyTimeout: timeout, keepAliveTimeout: 10_000 });
    this.#onRetry = options.onRetry;
  }

  /** Redacted absolute URL of `path`, safe to log and show. */
  displayUrl(path: string): string {
    return redactUrl(feedUrl(this.feedRoot, path));
  }

  /**
   * The latest packet number from `replication-info` (FEED.md, replication-info), null when the
   * feed has none. Retried like any request (upstream's own consumers see connection resets here).
   */
  async replicationInfo(signal?: AbortSignal): Promise<number | null> {
    return this.#withRetry('replication-info', signal, async (url) => {
      const res = await this.#get(url, signal);
      const text = await res.body.text();
      this.#check(res, url, text, false);
      try {
        return parseReplicationInfo(JSON.parse(text));
      } catch (error) {
        throw new FeedHttpError(res.statusCode, redactUrl(url), safeMessage(error, this.#token));
      }
    });
  }

  /**
   * Downloads `path` into a new file under `tmpDir`, hashing it on the way (sha256 hex). The
   * caller owns the returned file. A 404 gives `{status: 'missing'}` (FEED.md, Errors).
   * @throws FeedAuthError on 400/403, FeedHttpError on other statuses, FeedNetworkError after retries.
   */
  async download(path: string, tmpDir: string, signal?: AbortSignal): Promise<DownloadResult> {
    await mkdir(tmpDir, { recursive: true });
    return this.#withRetry(path, signal, async (url) => {
      const res = await this.#get(url, signal);
      if (res.statusCode === 404) return { status: 'missing', body: await res.body.text() };
      if (res.statusCode !== 200) this.#check(res, url, await res.body.text(), true);
      const file = join(tmpDir, `${randomUUID()}.part`);
      const hash = createHash('sha256');
      const hasher = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      });
      try {
        await pipeline(res.body, hasher, createWriteStream(file), { signal });
        const { size } = await stat(file);
        const expected = Number(res.headers['content-length']);
        if (Number.isFinite(expected) && expected !== size) {
          throw new RetryableError(`truncated body: ${size} of ${expected} bytes`);
        }
        return { status: 'ok', path: file, size, sha256: hash.digest('hex') };
      } catch (error) {
        await rm(file, { force: true });
        throw error;
      }
    });
  }

  /** Text of `path` (signatures), or null on 404. Same errors as {@link download}. */
  async text(path: string, signal?: AbortSignal): Promise<string | null> {
    return this.#withRetry(path, signal, async (url) => {
      const res = await this.#get(url, signal);
      const body = await res.body.text();
      if (res.statusCode === 404) return null;
      this.#check(res, url, body, true);
      return body;
    });
  }

  /** Releases connections. */
  async close(): Promise<void> {
    await this.#dispatcher.close();
  }

  #get(url: URL, signal?: AbortSignal) {
    return request(url, { method: 'GET', dispatcher: this.#dispatcher, signal, headers: { 'user-agent': 'livefeed' } });
  }

  #check(res: Dispatcher.ResponseData, url: URL, body: string, allowNotFound: boolean): void {
    const status = res.statusCode;
    if (status === 200 || (allowNotFound && status === 404)) return;
    if (status === 400 || status === 403) throw new FeedAuthError(status, redactUrl(url), body);
    if (TRANSIENT_STATUS.has(status)) throw new RetryableError(`HTTP ${status}`, retryAfter(res.headers));
    throw new FeedHttpError(status, redactUrl(url), body);
  }

  async #withRetry<T>(path: string, signal: AbortSignal | undefined, attempt: (url: URL) => Promise<T>): Promise<T> {
    const url = feedUrl(this.feedRoot, path, this.#token);
    let lastReason = '';
    for (let n = 1; n <= this.#retry.attempts; n++) {
      signal?.throwIfAborted();
      try {
        return await attempt(url);
      } catch (error) {
        if (error instanceof FeedAuthError || error instanceof FeedHttpError || signal?.aborted) throw error;
        lastReason = safeMessage(error, this.#token);
        if (n === this.#retry.attempts) break;
        const delayMs = this.#delay(n, error instanceof RetryableError ? error.retryAfterMs : undefined);
        this.#onRetry?.({ url: redactUrl(url), attempt: n, delayMs, reason: lastReason });
        await sleep(delayMs, undefined, { signal });
      }
    }
    throw new FeedNetworkError(redactUrl(url), lastReason, this.#retry.attempts);
  }

  #delay(attempt: number, retryAfterMs?: number): number {
    if (retryAfterMs !== undefined) return Math.min(retryAfterMs, this.#retry.maxDelayMs * 5);
    const exp = Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(exp * (0.5 + Math.random()));
  }
}

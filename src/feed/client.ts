import { mkdir } from 'node:fs/promises';
import { text as readText } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { FeedAuthError, FeedHttpError, FeedNetworkError, safeMessage } from './errors.js';
import {
  type Agents,
  closeAgents,
  createAgents,
  drain,
  type HttpResponse,
  httpGet,
  retryAfter,
} from './httpGet.js';
import { PartialDownload, PartialRestart } from './partial.js';
import { type FeedInfo, feedUrl, parseFeedInfo, redactUrl } from './protocol/urls.js';
import { isRouteMiss, routeMiss } from './routeMiss.js';
import type { DownloadTap } from './streamedDownload.js';

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
  /** Default of both timeouts below, in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** Milliseconds to open a connection (DNS and TCP/TLS). Default `timeoutMs`. */
  connectTimeoutMs?: number;
  /** Milliseconds without progress: to the response head, and between two body chunks. Default `timeoutMs`. */
  idleTimeoutMs?: number;
  /** Told about each retry; `url` is redacted. */
  onRetry?: (info: { url: string; attempt: number; delayMs: number; reason: string }) => void;
  /** Told about each file received whole (download or signature text); `path` is under the feed root, no token. */
  onFetched?: (info: { path: string; bytes: number }) => void;
  /**
   * Smallest file, in bytes, whose downloaded bytes a later process resumes after a crash (it gets
   * a sidecar, feed/partial.ts). Default `SIDECAR_MIN_BYTES` (1 MiB).
   */
  sidecarMinBytes?: number;
  /**
   * Whether a 404 with an HTML page means the path matches no route, an error (the feed service,
   * FEED.md Errors: its missing files answer `text/plain`). Default true. False for a plain web
   * server such as the full dumps' host, whose every missing file is an HTML page.
   */
  routeMissPages?: boolean;
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
  readonly #agents: Agents;
  readonly #connectTimeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #onRetry: FeedClientOptions['onRetry'];
  readonly #onFetched: FeedClientOptions['onFetched'];
  readonly #sidecarMinBytes: number | undefined;
  readonly #routeMissPages: boolean;

  constructor(options: FeedClientOptions) {
    this.feedRoot = options.feedRoot;
    this.#token = options.token;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    const timeout = options.timeoutMs ?? 30_000;
    // Every request gets both timeouts; they fail it with errors that #withRetry retries.
    this.#connectTimeoutMs = options.connectTimeoutMs ?? timeout;
    this.#idleTimeoutMs = options.idleTimeoutMs ?? timeout;
    this.#agents = createAgents();
    this.#onRetry = options.onRetry;
    this.#onFetched = options.onFetched;
    this.#sidecarMinBytes = options.sidecarMinBytes;
    this.#routeMissPages = options.routeMissPages ?? true;
  }

  /** Redacted absolute URL of `path`, safe to log and show. */
  displayUrl(path: string): string {
    return redactUrl(feedUrl(this.feedRoot, path));
  }

  /**
   * The latest packet number from `replication-info` (FEED.md, replication-info), null when the
   * feed has none. See {@link FeedClient.feedInfo}.
   */
  async replicationInfo(signal?: AbortSignal): Promise<number | null> {
    return (await this.feedInfo(signal)).latest;
  }

  /**
   * What `replication-info` says (FEED.md, replication-info): the latest packet (null when the feed
   * has none) and, from a livefeed mirror, the oldest packet it holds. Retried like any request
   * (upstream's own consumers see connection resets here), and so is a 200 whose body is not JSON
   * (a maintenance page).
   * @throws FeedHttpError for JSON of another shape; FeedNetworkError after retries.
   */
  async feedInfo(signal?: AbortSignal): Promise<FeedInfo> {
    return this.#withRetry('replication-info', signal, async (url) => {
      const res = await this.#get(url, signal);
      const text = await readText(res.body);
      this.#check(res, url, text, false);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        // A maintenance or proxy page answered 200: the feed is not there yet, asked again.
        throw new RetryableError(
          `replication-info answered 200 with a body that is not JSON: ${JSON.stringify(text.slice(0, 80))}`,
        );
      }
      try {
        return parseFeedInfo(body);
      } catch (error) {
        throw new FeedHttpError(res.statusCode, redactUrl(url), safeMessage(error, this.#token));
      }
    });
  }

  /**
   * Downloads `path` to a new file under `tmpDir`, hashing it on the way (sha256 hex); the caller
   * owns the returned file. Bytes arrive in `<tmpDir>/partial/` and the file is renamed only once
   * its size equals Content-Length. An interrupted transfer (cut, idle timeout, abort, crash) is
   * resumed on the next attempt with `Range`/`If-Range` when the server announced
   * `Accept-Ranges: bytes` and a validator, else fetched again whole (src/feed/partial.ts).
   * A 404 gives `{status: 'missing'}` (FEED.md, Errors), unless its body is an HTML page: a path
   * that matches no route is an error, not a missing file. `tap` is told where each body goes and
   * how far it got, so that readers can follow the file as it arrives (streamedDownload.ts).
   * @throws FeedAuthError on 400/403, FeedHttpError on other statuses, FeedNetworkError after retries.
   */
  async download(
    path: string,
    tmpDir: string,
    signal?: AbortSignal,
    tap?: DownloadTap,
  ): Promise<DownloadResult> {
    await mkdir(tmpDir, { recursive: true });
    const partial = await PartialDownload.open(tmpDir, path, this.#sidecarMinBytes);
    return this.#withRetry(path, signal, async (url) => {
      const res = await this.#get(url, signal, partial.requestHeaders());
      if (res.statusCode === 404) {
        await partial.discard();
        const body = await readText(res.body);
        this.#refuseRouteMiss(res, url);
        return { status: 'missing', body };
      }
      if (res.statusCode === 416) {
        await drain(res.body);
        await partial.discard();
        throw new RetryableError('range not satisfiable (the file changed?); fetching it whole');
      }
      if (res.statusCode !== 200 && res.statusCode !== 206)
        this.#check(res, url, await readText(res.body), true);
      try {
        await partial.begin(res.statusCode, res.headers);
      } catch (error) {
        await drain(res.body).catch(() => {});
        throw error instanceof PartialRestart ? new RetryableError(error.message) : error;
      }
      tap?.begin(partial.path, partial.offset, partial.total);
      await pipeline(res.body, partial.writer(tap && ((offset) => tap.wrote(offset))), { signal });
      const done = await partial.complete().catch((error: unknown) => {
        throw error instanceof PartialRestart ? new RetryableError(error.message) : error;
      });
      if ('short' in done) throw new RetryableError(`truncated body: ${done.size} of ${done.expected} bytes`);
      this.#onFetched?.({ path, bytes: done.size });
      return { status: 'ok', ...done };
    });
  }

  /** Text of `path` (signatures), or null on a missing file's 404. Same errors as {@link download}. */
  async text(path: string, signal?: AbortSignal): Promise<string | null> {
    return this.#withRetry(path, signal, async (url) => {
      const res = await this.#get(url, signal);
      const body = await readText(res.body);
      this.#refuseRouteMiss(res, url);
      if (res.statusCode === 404) return null;
      this.#check(res, url, body, true);
      this.#onFetched?.({ path, bytes: Buffer.byteLength(body) });
      return body;
    });
  }

  /**
   * Whether `path` is on the feed, without reading it: true on 200 (the body is dropped with its
   * connection), false on a missing file's 404 (FEED.md, Errors). Same errors as {@link download}.
   */
  async exists(path: string, signal?: AbortSignal): Promise<boolean> {
    return this.#withRetry(path, signal, async (url) => {
      const res = await this.#get(url, signal);
      if (res.statusCode === 200) {
        res.body.destroy();
        return true;
      }
      const body = await readText(res.body);
      this.#refuseRouteMiss(res, url);
      this.#check(res, url, body, true);
      return false;
    });
  }

  /** Throws {@link routeMiss} for a route miss's HTML 404, unless this client's host answers every 404 so (`routeMissPages`). */
  #refuseRouteMiss(res: HttpResponse, url: URL): void {
    if (this.#routeMissPages && isRouteMiss(res)) throw routeMiss(url);
  }

  /** Releases connections. */
  async close(): Promise<void> {
    closeAgents(this.#agents);
  }

  #get(url: URL, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<HttpResponse> {
    return httpGet(url, {
      agents: this.#agents,
      headers: { 'user-agent': 'livefeed', ...headers },
      signal,
      connectTimeoutMs: this.#connectTimeoutMs,
      idleTimeoutMs: this.#idleTimeoutMs,
    });
  }

  #check(res: HttpResponse, url: URL, body: string, allowNotFound: boolean): void {
    const status = res.statusCode;
    if (status === 200 || (allowNotFound && status === 404)) return;
    if (status === 400 || status === 403) throw new FeedAuthError(status, redactUrl(url), body);
    if (TRANSIENT_STATUS.has(status)) throw new RetryableError(`HTTP ${status}`, retryAfter(res.headers));
    throw new FeedHttpError(status, redactUrl(url), body);
  }

  async #withRetry<T>(
    path: string,
    signal: AbortSignal | undefined,
    attempt: (url: URL) => Promise<T>,
  ): Promise<T> {
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

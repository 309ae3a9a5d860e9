import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';

/**
 * GET over Node's own `http`/`https` with keep-alive agents, for the feed client (client.ts). It
 * replaced undici's `request`, whose module took 55–66 ms to load (bundled; `http` and `https` 8
 * ms), a cost every `sync`, `start`, `status` and `bootstrap` paid before its first request
 * (issue 16, start-up; bench/RESULTS.md). The feed's requests are few and large: the client's speed
 * is the body's, which both stream alike.
 */

/** Keep-alive agents of one feed client; {@link closeAgents} ends them. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/** Agents that keep idle connections open for `keepAliveMs` (default 10 s). */
export function createAgents(keepAliveMs = 10_000): Agents {
  const options = { keepAlive: true, timeout: keepAliveMs };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

/** Closes every connection of `agents`. */
export function closeAgents(agents: Agents): void {
  agents.http.destroy();
  agents.https.destroy();
}

/** A response: its status, head and body (read it to its end, or {@link drain} it). */
export interface HttpResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/** Options of {@link httpGet}. Durations in milliseconds. */
export interface HttpGetOptions {
  agents: Agents;
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** Most time to open the connection (DNS, TCP, TLS). */
  connectTimeoutMs: number;
  /** Most time without progress: to the response head, then between two chunks of the body. */
  idleTimeoutMs: number;
}

/** Raised when a request makes no progress for its timeout; client.ts retries it like a network error. */
export class HttpTimeoutError extends Error {
  override name = 'HttpTimeoutError';
}

/**
 * Sends `GET url` and resolves with the response once its head arrived; the body is left to read.
 * A body that stalls for `idleTimeoutMs`, is cut, or is aborted fails its stream.
 * @throws HttpTimeoutError when connecting or the head takes too long; the network's errors; the
 *   signal's reason when aborted
 */
export function httpGet(url: URL, options: HttpGetOptions): Promise<HttpResponse> {
  const secure = url.protocol === 'https:';
  const request = (secure ? https : http).request(url, {
    method: 'GET',
    agent: secure ? options.agents.https : options.agents.http,
    headers: options.headers,
    signal: options.signal,
  });
  request.once('socket', (socket: Socket) => watchConnect(request, socket, secure, options.connectTimeoutMs));
  let response: IncomingMessage | undefined;
  // Idle from the request sent to the response head, and between two chunks of the body; the body
  // fails with this error first, so the retry names the timeout rather than the cut it causes.
  request.setTimeout(options.idleTimeoutMs, () => {
    const error = new HttpTimeoutError(`idle timeout: no data from the feed for ${options.idleTimeoutMs} ms`);
    if (response && !response.complete) response.destroy(error);
    request.destroy(error);
  });
  return new Promise((resolve, reject) => {
    request.once('error', reject);
    // A body cut short fails its stream (Node destroys it with ECONNRESET "aborted").
    request.once('response', (body) => {
      response = body;
      resolve({ statusCode: body.statusCode ?? 0, headers: body.headers, body });
    });
    request.end();
  });
}

function watchConnect(request: http.ClientRequest, socket: Socket, secure: boolean, timeoutMs: number): void {
  // A reused keep-alive connection is open already.
  if (!socket.connecting) return;
  const timer = setTimeout(
    () =>
      request.destroy(
        new HttpTimeoutError(`connect timeout: no connection to the feed within ${timeoutMs} ms`),
      ),
    timeoutMs,
  );
  const clear = () => clearTimeout(timer);
  socket.once(secure ? 'secureConnect' : 'connect', clear);
  socket.once('close', clear);
}

/** Reads the body to its end and drops it (the connection can be reused). */
export async function drain(body: IncomingMessage): Promise<void> {
  for await (const _ of body);
}

/** Milliseconds a `Retry-After` header asks to wait (seconds or an HTTP date), undefined without one. */
export function retryAfter(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = headers['retry-after'];
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const seconds = Number(text);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

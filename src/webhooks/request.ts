import { createHash, createHmac } from 'node:crypto';
import type { WebhookEvent } from './source.js';

/** Header holding the body's signature: `sha256=<hex of HMAC-SHA256(secret, body)>`. */
export const SIGNATURE_HEADER = 'x-livefeed-signature';
/** Header naming the batch: the same for every attempt of the same events. */
export const DELIVERY_HEADER = 'x-livefeed-delivery';

/** Most milliseconds one POST may take, answer included. */
export const POST_TIMEOUT_MS = 10_000;

/** `sha256=<hex>`: the HMAC-SHA256 of `body` under `secret`, as sent in {@link SIGNATURE_HEADER}. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * The JSON body of one POST: `{"webhook", "edges": [{"id", "node"}], "pageInfo": {"endPosition",
 * "hasNextPage"}}`, nodes in stream order as the change stream's JSON form (README, Webhooks). Built
 * as text so that each stored JSON dump line is sent as it is.
 */
export function webhookBody(name: string, events: readonly WebhookEvent[], hasMore: boolean): string {
  const edges = events.map((e) => `{"id":${JSON.stringify(e.id)},"node":${e.json}}`).join(',');
  const pageInfo = JSON.stringify({ endPosition: events.at(-1)?.id ?? null, hasNextPage: hasMore });
  return `{"webhook":${JSON.stringify(name)},"edges":[${edges}],"pageInfo":${pageInfo}}`;
}

/** The delivery id of a batch: a hash of the webhook and its first and last event, stable across retries. */
export function deliveryId(name: string, events: readonly WebhookEvent[]): string {
  return createHash('sha256')
    .update(`${name}\n${events[0]?.id}\n${events.at(-1)?.id}`)
    .digest('hex')
    .slice(0, 32);
}

/** How one POST went: a 2xx, or the reason it did not (safe to store and show). */
export type PostOutcome = { ok: true; status: number } | { ok: false; error: string };

/**
 * POSTs `body` to `url`, signed with `secret`. Credentials in the URL are sent as HTTP basic
 * authentication (fetch refuses them in the URL); redirects are not followed (a 3xx is a failure).
 * Never throws for the receiver's faults: they come back as `{ ok: false, error }`, an error that
 * names neither the secret nor the URL's credentials or query.
 * @throws the signal's reason when `signal` aborts (stopping)
 */
export async function postBatch(options: {
  url: string;
  secret: string;
  body: string;
  delivery: string;
  userAgent: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}): Promise<PostOutcome> {
  const url = new URL(options.url);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': options.userAgent,
    [SIGNATURE_HEADER]: signBody(options.secret, options.body),
    [DELIVERY_HEADER]: options.delivery,
  };
  if (url.username || url.password) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const timeoutMs = options.timeoutMs ?? POST_TIMEOUT_MS;
  const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: options.body,
      redirect: 'manual',
      signal: AbortSignal.any(signals),
    });
    const text = await response.text().catch(() => '');
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    const said = text.replace(/\s+/g, ' ').trim().slice(0, 200);
    return { ok: false, error: `HTTP ${response.status}${said ? `: ${said}` : ''}` };
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    return { ok: false, error: networkError(error, timeoutMs) };
  }
}

/** A fetch failure in words: its cause's code (ECONNREFUSED, ENOTFOUND, ...) or the timeout. */
function networkError(error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: NodeJS.ErrnoException };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const code = e.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (code === 'UND_ERR_SOCKET') return 'the receiver closed the connection (UND_ERR_SOCKET)';
  if (code) return `${code}${e.cause?.message ? `: ${e.cause.message}` : ''}`;
  // fetch refuses the Fetch standard's blocked ports (4190, 6000, ...) before connecting.
  if (e.cause?.message === 'bad port')
    return "bad port: fetch never connects to this port (one of the Fetch standard's blocked ports); give the receiver another";
  return e.cause?.message ?? e.message;
}

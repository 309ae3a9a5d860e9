import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a receiver got, with what it answered. */
export interface ReceivedPost {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** The parsed body of a webhook POST (README, Webhooks). */
export interface WebhookBody {
  webhook: string;
  edges: {
    id: string;
    node: Record<string, unknown> & { __typename: string; mbid: string; entity: string; packet: number };
  }[];
  pageInfo: { endPosition: string | null; hasNextPage: boolean };
}

/**
 * A webhook receiver on 127.0.0.1, port 0 first: answers `status` (settable), can stop listening
 * (connection refused) and listen again on the same port.
 */
export interface Receiver {
  url: string;
  posts: ReceivedPost[];
  status: number;
  /** Bodies answered 2xx, parsed, in order. */
  accepted(): WebhookBody[];
  /** Stops listening: connections are refused until {@link reopen}. */
  down(): Promise<void>;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

/** True when `signature` (`sha256=<hex>`) is the HMAC-SHA256 of `body` under `secret` (the README's check). */
export function verifySignature(secret: string, body: string, signature: string | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(signature ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Starts a receiver; `path` is the URL's path. */
export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const posts: ReceivedPost[] = [];
  let server: Server;
  let port = 0;
  const receiver: Receiver = {
    url: '',
    posts,
    status: 204,
    accepted: () =>
      posts.filter((p) => p.status >= 200 && p.status < 300).map((p) => JSON.parse(p.body) as WebhookBody),
    down: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    reopen: () => open(),
    close: () => receiver.down(),
  };
  const open = async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        posts.push({
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          status: receiver.status,
        });
        res.writeHead(receiver.status, { 'content-type': 'text/plain' });
        res.end(receiver.status >= 300 ? 'receiver says no' : '');
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    receiver.url = `http://127.0.0.1:${port}${path}`;
  };
  await open();
  return receiver;
}

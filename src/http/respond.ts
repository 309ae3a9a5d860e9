import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Answers an operations endpoint: `body` with `status` and no caching (HEAD gets the head only);
 * methods other than GET and HEAD get 405 with `Allow`.
 */
export function respond(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const text = `method ${req.method} not allowed\n`;
    res.writeHead(405, {
      allow: 'GET, HEAD',
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
    return;
  }
  res.writeHead(status, {
    'content-type': contentType,
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

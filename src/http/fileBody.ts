import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { OpenFeedFile } from '../files/local.js';

/**
 * Sending feed files over HTTP, shared by the sample feed (`src/samplefeed/`), the file links
 * (`files.ts`) and the mirror endpoints (`mirror.ts`): answer Range (206/416), HEAD and conditional
 * requests for a file opened with `openFeedFile` (`src/files/local.ts`), stream the bytes unchanged.
 */

/** Outcome of a `Range` header against a file of known size: inclusive byte offsets when partial. */
export type RangeOutcome =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const RANGE_SPEC = /^(\d*)-(\d*)$/;

/**
 * Interprets a `Range` request header (RFC 9110, section 14) for a file of `size` bytes.
 * - absent, another unit than `bytes`, an empty file, or several ranges → `full` (the server may
 *   ignore Range; it does not build multipart bodies);
 * - one range `a-b`, `a-` or `-n` → `partial`, the end clamped to the last byte;
 * - a malformed byte range, one starting at or past the end, `a-b` with a > b, or `-0` → `unsatisfiable` (416).
 */
export function parseRange(header: string | undefined, size: number): RangeOutcome {
  if (!header || size === 0) return { kind: 'full' };
  const eq = header.indexOf('=');
  if (eq < 0 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return { kind: 'full' };
  const specs = header.slice(eq + 1).split(',');
  if (specs.length > 1) return { kind: 'full' };
  const match = RANGE_SPEC.exec(specs[0]!.trim());
  if (!match) return { kind: 'unsatisfiable' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'unsatisfiable' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || (last !== '' && Number(last) < start)) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end };
}

/** Content types of feed files (FEED.md, Deployments and URLs): by name, signatures first. */
export function feedContentType(name: string): string {
  if (name.endsWith('.asc')) return 'application/pgp-signature';
  if (name.endsWith('.tar.xz')) return 'application/x-xz';
  if (name.endsWith('.tar.bz2')) return 'application/x-bzip2';
  return 'application/octet-stream';
}

/** How {@link sendFile} answers. */
export interface SendFileOptions {
  contentType: string;
  /** Strong entity tag, quotes included (e.g. `"<sha256>"`): sent as ETag, honoured in If-None-Match and If-Range. */
  etag?: string;
  /** More response headers (e.g. content-disposition). */
  headers?: OutgoingHttpHeaders;
  /** Told the status just before the head is written (request logs). */
  onStatus?: (status: number) => void;
}

/** Body of a 416 answer. */
export const RANGE_NOT_SATISFIABLE = 'Requested range not satisfiable\n';

/**
 * Answers `req` with `file`: 200 with the whole file, 206 with one byte range (`Range`, unless an
 * `If-Range` validator no longer matches), 416 with `Content-Range: bytes *\/size` for an
 * unsatisfiable range, 304 when `If-None-Match` names `etag`; no body for HEAD. Always closes the
 * file (the read stream owns it while streaming, also when the client hangs up mid-body).
 * @throws stream errors other than the client going away.
 */
export async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: OpenFeedFile,
  options: SendFileOptions,
): Promise<void> {
  const lastModified = file.mtime.toUTCString();
  const headers: OutgoingHttpHeaders = {
    'content-type': options.contentType,
    'accept-ranges': 'bytes',
    'last-modified': lastModified,
    ...(options.etag ? { etag: options.etag } : {}),
    ...options.headers,
  };
  const head = req.method === 'HEAD';
  if (options.etag && matchesEtag(req.headers['if-none-match'], options.etag)) {
    await file.handle.close();
    options.onStatus?.(304);
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const ifRange = req.headers['if-range'];
  const rangeStillValid = ifRange === undefined || ifRange === options.etag || ifRange === lastModified;
  const range = rangeStillValid ? parseRange(req.headers.range, file.size) : ({ kind: 'full' } as const);
  if (range.kind === 'unsatisfiable') {
    await file.handle.close();
    options.onStatus?.(416);
    res.writeHead(416, {
      'content-type': 'text/plain; charset=utf-8',
      'content-range': `bytes */${file.size}`,
      'content-length': Buffer.byteLength(RANGE_NOT_SATISFIABLE),
    });
    res.end(head ? undefined : RANGE_NOT_SATISFIABLE);
    return;
  }
  const start = range.kind === 'partial' ? range.start : 0;
  const end = range.kind === 'partial' ? range.end : file.size - 1;
  const status = range.kind === 'partial' ? 206 : 200;
  if (range.kind === 'partial') headers['content-range'] = `bytes ${start}-${end}/${file.size}`;
  headers['content-length'] = end - start + 1;
  options.onStatus?.(status);
  res.writeHead(status, headers);
  if (head || file.size === 0) {
    await file.handle.close();
    res.end();
    return;
  }
  const body = file.handle.createReadStream({ start, end });
  try {
    await pipeline(body, res);
  } catch (error) {
    // A client that hangs up mid-body is normal for a file server; anything else is a real failure.
    if ((error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw error;
  }
}

/** True when an `If-None-Match` header lists `etag` (or is `*`); weak tags compare by their opaque part. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * A signal that aborts when the client goes away before the response is finished, so that work
 * done for it (an on-demand download from the feed) stops too.
 */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('the client closed the connection'));
  });
  return controller.signal;
}

/** Sends a small whole text body (none for HEAD) with its length. */
export function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: string,
): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

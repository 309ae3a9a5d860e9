import { FeedHttpError } from './errors.js';
import type { HttpResponse } from './httpGet.js';
import { redactUrl } from './protocol/urls.js';

/**
 * True for a 404 whose body is an HTML page: the path matches no route on the feed (FEED.md,
 * Errors: last row), where a missing file's 404 is `text/plain` (`Can't find ...`). Taken for "no
 * dump", it would let hours settle as having no changes on a wrong feed root or entity type path.
 */
export function isRouteMiss(res: HttpResponse): boolean {
  return res.statusCode === 404 && /^\s*text\/html\b/i.test(String(res.headers['content-type'] ?? ''));
}

/** The error of a {@link isRouteMiss} answer: never retried, the file is recorded FAILED. */
export function routeMiss(url: URL): FeedHttpError {
  return new FeedHttpError(
    404,
    redactUrl(url),
    'the feed has no route at this path (an HTML page, not a missing file\'s "Can\'t find ..."): check --feed-url (README, Configuration)',
  );
}

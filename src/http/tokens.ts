import { createHash, timingSafeEqual } from 'node:crypto';

/** Result of checking a request's `token` parameter (FEED.md, Errors: 400 before 403). */
export type TokenVerdict = 'ok' | 'missing' | 'invalid';

/**
 * Checks mirror access tokens (`LIVEFEED_MIRROR_TOKENS`, issue 4, Mirror endpoints). With no tokens
 * configured every request is `ok` (open mirror). Otherwise the given token must equal one of them:
 * both sides are hashed with SHA-256 and compared with `crypto.timingSafeEqual` (equal-length
 * digests), against every configured token without stopping early, so the time taken tells nothing
 * about any token's content or length.
 */
export function tokenChecker(tokens: readonly string[]): (given: string | null) => TokenVerdict {
  const digests = tokens.map(digest);
  return (given) => {
    if (digests.length === 0) return 'ok';
    if (!given) return 'missing';
    const candidate = digest(given);
    let match = false;
    for (const known of digests) match = timingSafeEqual(known, candidate) || match;
    return match ? 'ok' : 'invalid';
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

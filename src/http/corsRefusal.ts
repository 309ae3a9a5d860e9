import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../logger.js';

/** The `extensions.code` of a preflight refused because its origin is not in LIVEFEED_CORS_ORIGINS. */
export const CORS_NOT_ALLOWED = 'CORS_NOT_ALLOWED';

/**
 * Answers a browser's CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) from an
 * origin that `allowed` does not list: 403 with a JSON error naming the origin and the variable that
 * allows it, and one warning per origin in the log, since the browser shows the page's user only
 * "blocked by CORS policy" and the operator nothing. Without it, Yoga answered 405 "GraphQL only
 * supports GET and POST requests", which sends one looking for a wrong method. Preflights of listed
 * origins go on to Yoga's CORS handling.
 * @param allowed LIVEFEED_CORS_ORIGINS (README, Configuration); empty: same origin only.
 */
export function corsRefusalPlugin(allowed: readonly string[], logger: Logger): Plugin {
  const warned = new Set<string>();
  return {
    // onResponse, not onRequest: Yoga's own CORS plugin comes first and ends every preflight with 204.
    onResponse({ request, setResponse, fetchAPI }) {
      if (request.method !== 'OPTIONS' || !request.headers.has('access-control-request-method')) return;
      const origin = request.headers.get('origin') ?? '';
      // `*` lets every origin in (Yoga's CORS handling answers it).
      if (allowed.includes(origin) || allowed.includes('*')) return;
      const message = `cross-origin requests from ${origin || 'an unnamed origin'} are not allowed: add the origin to LIVEFEED_CORS_ORIGINS (README, Configuration)`;
      if (!warned.has(origin) && warned.size < 100) {
        warned.add(origin);
        logger.warn({ event: 'cors-refused', origin }, message);
      }
      setResponse(
        new fetchAPI.Response(
          JSON.stringify({ errors: [{ message, extensions: { code: CORS_NOT_ALLOWED } }] }),
          {
            status: 403,
            headers: { 'content-type': 'application/json; charset=utf-8', vary: 'Origin' },
          },
        ),
      );
    },
  };
}

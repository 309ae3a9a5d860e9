import type { Route } from './route.js';

/** `GET /`: a redirect to `/graphql` (GraphiQL in a browser), keeping the query string. */
export function rootRoute(): Route {
  return {
    handle(req, res, url) {
      if (url.pathname !== '/' || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
      res.writeHead(302, { location: `/graphql${url.search}`, 'content-type': 'text/plain' });
      res.end(req.method === 'HEAD' ? undefined : 'GraphQL is on /graphql\n');
      return true;
    },
  };
}

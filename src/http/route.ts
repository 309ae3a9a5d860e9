import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A non-GraphQL HTTP route (files, mirror, health, metrics, freshness): `handle` returns false when
 * the request is not for it. Routes live in `src/http/`, one file each, and are listed in `createApp`
 * (`app.ts`). In its own file so that the routes do not import the app that lists them.
 */
export interface Route {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean | Promise<boolean>;
}

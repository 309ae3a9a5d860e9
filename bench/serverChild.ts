/**
 * The GraphQL server under load, in its own process: `tsx bench/serverChild.ts <db>`. Serves the
 * app exactly as `livefeed serve` does (createApp + node:http) on 127.0.0.1, port 0, read-only,
 * and prints `{"port": N}` once listening. Stops on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openStore, SERVING_CACHE_BYTES } from '../src/db/client.js';
import { ENTITY_TYPES } from '../src/feed/entities.js';
import { createApp } from '../src/http/app.js';
import { createLogger } from '../src/logger.js';

const db = process.argv[2];
if (!db) throw new Error('usage: serverChild.ts DB');
const store = openStore(db, { readonly: true, cacheBytes: SERVING_CACHE_BYTES });
const app = createApp({
  store,
  service: {
    demo: false,
    deployment: 'production',
    feedRoot: 'https://metabrainz.org/api/musicbrainz',
    database: 'musicbrainz',
    version: 'bench',
    entities: ENTITY_TYPES,
  },
  logger: createLogger('error'),
  dataDir: '/nonexistent',
});
const server = createServer(app.handle);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => {
    store.close();
    process.exit(0);
  });
});

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { App } from '../../src/server.js';

/** An app listening on a loopback port. */
export interface ServedApp {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  close(): Promise<void>;
}

/** Serves `app.handle` on 127.0.0.1, port 0 (any free port), as the CLI does on its configured port. */
export async function serveApp(app: App): Promise<ServedApp> {
  const server = createServer(app.handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      const closed = new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
      server.closeAllConnections();
      await closed;
    },
  };
}

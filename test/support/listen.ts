import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server on 127.0.0.1, port 0. */
export interface Listening {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  origin: string;
  close(): Promise<void>;
}

/** Serves `handle` (e.g. `createApp(...).handle`) on a port of the system's choosing. */
export async function listen(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Listening> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

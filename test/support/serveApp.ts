import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { redactDatabaseUrl } from '../../src/config/databaseUrl.js';
import { openStore, type Store } from '../../src/db/client.js';
import { type App, type AppOptions, createApp } from '../../src/http/app.js';
import { testLogger, testService } from './harness.js';
import type { TestDatabase } from './stores.js';

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

/** Options of {@link AppServers.start}: createApp's, with the test service and logger as defaults. */
export type ServedAppOptions = Omit<AppOptions, 'store' | 'service' | 'logger'> &
  Partial<Pick<AppOptions, 'service' | 'logger'>>;

/** Apps on stores of their own, each served on port 0; {@link AppServers.closeAll} ends them all. */
export class AppServers {
  private readonly stores: Store[] = [];
  private readonly served: ServedApp[] = [];

  /** Opens `dbPath`, builds the app over it and serves it. */
  async start(dbPath: string, options: ServedAppOptions): Promise<{ app: App; origin: string }> {
    const store = this.open(dbPath);
    const app = createApp({ service: testService(), logger: testLogger(), ...options, store });
    const server = await serveApp(app);
    this.served.push(server);
    return { app, origin: server.origin };
  }

  /**
   * Builds the app over `db`'s reads (either store, test/support/stores.ts; no SQLite store behind
   * a PostgreSQL one) and serves it; `db` stays open (the caller closes it).
   */
  async startOn(db: TestDatabase, options: ServedAppOptions): Promise<{ app: App; origin: string }> {
    const app = createApp({
      service: testService(),
      logger: testLogger(),
      ...options,
      reads: db.reads,
      display: redactDatabaseUrl(db.db),
    });
    const server = await serveApp(app);
    this.served.push(server);
    return { app, origin: server.origin };
  }

  /** Opens `dbPath`; the store is closed by {@link closeAll}. */
  open(dbPath: string): Store {
    const store = openStore(dbPath);
    this.stores.push(store);
    return store;
  }

  async closeAll(): Promise<void> {
    for (const server of this.served.splice(0)) await server.close();
    for (const store of this.stores.splice(0)) store.close();
  }
}

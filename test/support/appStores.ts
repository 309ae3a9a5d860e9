/**
 * GraphQL over either store (issue 17, docs/POSTGRES_PORT.md step 4): the same test bodies against
 * an app over a temporary SQLite file and one over a database of a throw-away PostgreSQL cluster,
 * both filled by the real sync writers (`SyncStore`, test/support/stores.ts) from the same real
 * archives. The SQLite app is `createApp` over a reader connection of its own, as `serve` runs;
 * the PostgreSQL app is `createApp` over `postgresReads` (every route: GraphQL, /ready, /freshness,
 * /metrics, /files, the mirror), with NO SQLite store behind it: a resolver or route still reading
 * a SQLite store fails the PostgreSQL run.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { type Reads, sqliteReads } from '../../src/db/reads.js';
import type { ServiceInfo } from '../../src/graphql/builder.js';
import { type App, type AppOptions, createApp } from '../../src/http/app.js';
import type { GraphqlServer } from '../../src/http/graphql.js';
import type { PacketEvents } from '../../src/ops/events.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { tempDir, testLogger, testService } from './harness.js';
import { describeStores, type StoreKind, type TestDatabase } from './stores.js';

/** The GraphQL endpoint of a run: `gql(app, ...)` in-process, or `handle` behind a real HTTP server. */
export interface GraphqlApp {
  yoga: GraphqlServer;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** The app's live events: publish `packetSynced` as a sync in the same process does. */
  events: PacketEvents;
}

/** The app of one run of {@link describeAppStores}, open from `beforeAll` until `afterAll`. */
export interface AppUnderTest {
  kind: StoreKind['kind'];
  /** `createApp` over the store: GraphQL and every HTTP route. */
  app: App;
  /**
   * The database: `db.store` writes more through the sync writer (a SQLite app's reader sees it
   * on its next read), `db.rows` reads rows with a statement written once (`?` parameters).
   */
  db: TestDatabase;
  /** The run's temporary folder (archives), deleted after it. */
  dir: string;
  /** The SQLite app's own reader connection (kind `sqlite`), e.g. to record its statements. */
  reader?: Store;
}

/** Options of {@link describeAppStores}. */
export interface AppStoresOptions {
  /** Service facts of the app (default test/support/harness.ts `testService()`). */
  service?: Partial<ServiceInfo>;
  /** Wraps the app's reads (e.g. to count them); default: the store's reads as they are. */
  wrapReads?: (reads: Reads) => Reads;
  /** More options of `createApp` (mirror tokens, upstream, freshness thresholds). */
  app?: Partial<Omit<AppOptions, 'store' | 'reads' | 'display' | 'service' | 'logger'>>;
}

async function openApp(stores: StoreKind, build: AppBuild, options: AppStoresOptions) {
  const temp = await tempDir(`lf-app-${stores.kind}-`);
  let db: TestDatabase | undefined;
  let reader: Store | undefined;
  const close = async () => {
    reader?.close();
    await db?.close();
    await temp.cleanup();
  };
  try {
    db = await stores.create(temp.dir);
    await build(db.store, temp.dir, db);
    const service = testService(options.service);
    const logger = testLogger();
    let app: App;
    const wrap = options.wrapReads ?? ((reads: Reads) => reads);
    if (stores.kind === 'sqlite') {
      reader = openStore(db.db);
      app = createApp({
        store: reader,
        reads: wrap(sqliteReads(reader)),
        service,
        logger,
        dataDir: temp.dir,
        ...options.app,
      });
    } else {
      app = createApp({
        reads: wrap(db.reads),
        display: db.store.display,
        service,
        logger,
        dataDir: temp.dir,
        ...options.app,
      });
    }
    return { run: { kind: stores.kind, app, db, dir: temp.dir, reader } satisfies AppUnderTest, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Fills a new database through its sync writer; `dir` is a temporary folder for archives; `db`
 * the database itself, for rows no PostgreSQL writer makes yet (`db.rows`, statements written once).
 */
export type AppBuild = (writer: SyncStore, dir: string, db: TestDatabase) => Promise<void>;

/**
 * Declares `body` twice (test/support/stores.ts `describeStores`: `<name> [SQLite]`, and
 * `<name> [PostgreSQL]`, skipped only on a machine without PostgreSQL): each run makes a new
 * database, fills it with `build`, and opens the app of {@link AppUnderTest} over it. `body` gets
 * the kind at declaration (for a test of one store only) and `app()`, to call from tests and hooks
 * (it throws outside them).
 */
export function describeAppStores(
  name: string,
  build: AppBuild,
  body: (kind: StoreKind['kind'], app: () => AppUnderTest) => void,
  options: AppStoresOptions = {},
): void {
  describeStores(name, (stores) => {
    let opened: Awaited<ReturnType<typeof openApp>> | undefined;
    beforeAll(async () => {
      opened = await openApp(stores, build, options);
    }, 120_000);
    afterAll(async () => {
      await opened?.close();
    });
    body(stores.kind, () => {
      if (!opened) throw new Error(`the ${stores.kind} app of "${name}" is not open (outside its tests?)`);
      return opened.run;
    });
  });
}

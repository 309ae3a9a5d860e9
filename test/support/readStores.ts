/**
 * The same test bodies of the read side against both stores (issue 17, docs/POSTGRES_PORT.md): a
 * temporary SQLite file and a database of a throw-away PostgreSQL cluster (test/support/postgres.ts),
 * each open for the whole suite with its async `Reads`. The writer's suites, which make a fresh
 * database per test, use test/support/stores.ts `describeStores`. The PostgreSQL run is skipped,
 * with the reason in its name, only where the machine has no PostgreSQL.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { openPostgresStore, type PostgresStore } from '../../src/db/postgres/client.js';
import { postgresReads } from '../../src/db/postgres/reads.js';
import { type Reads, sqliteReads } from '../../src/db/reads.js';
import { tempDir } from './harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from './postgres.js';
import type { StoreKind } from './stores.js';

/** Which store a run of {@link describeReadStores} tests. */
export type StoreKindName = StoreKind['kind'];

/** The store of one run, open from `beforeAll` until `afterAll`. */
export interface StoreUnderTest {
  kind: StoreKindName;
  /** The async reads over this store. */
  reads: Reads;
  /** The SQLite store (kind `sqlite`), else undefined. */
  sqlite?: Store;
  /** The PostgreSQL store (kind `postgres`), else undefined. */
  postgres?: PostgresStore;
  /** A temporary folder of this run (archives, a twin store), deleted after it. */
  dir: string;
}

let databases = 0;

/** Opens the store of one run; `close` closes it and everything it started. */
async function openRun(kind: StoreKindName): Promise<{ store: StoreUnderTest; close: () => Promise<void> }> {
  const temp = await tempDir(`lf-${kind}-`);
  if (kind === 'sqlite') {
    const sqlite = openStore(join(temp.dir, 'livefeed.db'));
    const close = async () => {
      sqlite.close();
      await temp.cleanup();
    };
    return { store: { kind, reads: sqliteReads(sqlite), sqlite, dir: temp.dir }, close };
  }
  let cluster: PostgresCluster | undefined;
  let postgres: PostgresStore | undefined;
  const close = async () => {
    await postgres?.close();
    await cluster?.stop();
    await temp.cleanup();
  };
  try {
    cluster = await startPostgres();
    const name = `stores_${process.pid}_${++databases}`;
    const { url } = await cluster.createDatabase(name);
    postgres = await openPostgresStore({ connectionString: url, display: name });
  } catch (error) {
    await close();
    throw error;
  }
  return { store: { kind, reads: postgresReads(postgres), postgres, dir: temp.dir }, close };
}

/**
 * Declares `body` twice: in `describe('<name> (SQLite)')` over a new SQLite file and in
 * `describePostgres('<name> (PostgreSQL)')` over a new database of its own throw-away cluster.
 * `body` gets the kind at declaration (for a test of one store only) and `store()`, the open
 * store, to call from hooks and tests (it throws before `beforeAll` opened it). The store starts
 * empty; fill it in the body's own `beforeAll`.
 */
export function describeReadStores(
  name: string,
  body: (kind: StoreKindName, store: () => StoreUnderTest) => void,
): void {
  for (const kind of ['sqlite', 'postgres'] as const) {
    const declare = kind === 'sqlite' ? describe : describePostgres;
    declare(`${name} (${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`, () => {
      let run: Awaited<ReturnType<typeof openRun>> | undefined;
      beforeAll(async () => {
        run = await openRun(kind);
      }, 60_000);
      afterAll(async () => {
        await run?.close();
      });
      body(kind, () => {
        if (!run) throw new Error(`the ${kind} store of "${name}" is not open (outside its tests?)`);
        return run.store;
      });
    });
  }
}

/**
 * Registers `beforeAll`/`afterAll` hooks (call them in a {@link describeReadStores} body) that fill
 * the run's store with `fill`, which gives back the SQLite store holding the same rows (the store
 * itself, or a SQLite twin filled alike for PostgreSQL); a twin is closed after the suite.
 * @returns that SQLite store, once `beforeAll` has run (the reference of a PostgreSQL run's answers)
 */
export function filledWith(
  store: () => StoreUnderTest,
  fill: (target: StoreUnderTest) => Promise<Store>,
  timeoutMs = 60_000,
): () => Store {
  let twin: Store | undefined;
  beforeAll(async () => {
    twin = await fill(store());
  }, timeoutMs);
  afterAll(() => {
    if (twin !== store().sqlite) twin?.close();
  });
  return () => {
    if (!twin) throw new Error('the store is filled in beforeAll: read it inside a test');
    return twin;
  };
}

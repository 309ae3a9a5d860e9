/**
 * Suites that run the same test bodies against both stores (issue 17): a temporary SQLite file and
 * a database of the throw-away PostgreSQL cluster (postgres.ts). A body gets a {@link StoreKind}
 * and makes a fresh database per test with {@link StoreKind.create}; rows are read with the
 * statement written once, `?` parameters, and come back alike from both stores (see {@link plain}).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { redactDatabaseUrl } from '../../src/config/databaseUrl.js';
import { openStore, type Store } from '../../src/db/client.js';
import { type CurrentStatus, currentCounts } from '../../src/db/currentQueries.js';
import { openPostgresStore } from '../../src/db/postgres/client.js';
import { currentCountsPostgres } from '../../src/db/postgres/currentReads.js';
import { postgresReads } from '../../src/db/postgres/reads.js';
import { pgRows } from '../../src/db/postgres/sql.js';
import { postgresWebhookStore } from '../../src/db/postgres/webhooks.js';
import { type Reads, sqliteReads } from '../../src/db/reads.js';
import { sqliteWebhookStore, type WebhookStore } from '../../src/db/webhookStore.js';
import { postgresSyncStore } from '../../src/sync/postgres/syncStore.js';
import { sqliteSyncStore } from '../../src/sync/sqliteSyncStore.js';
import type { SyncStore } from '../../src/sync/syncStore.js';
import { type DumpCounts, HALF_DUMP_SQL, halfDumpLines, ORPHAN_DUMP_SQL } from './dbSnapshot.js';
import { describePostgres, type PostgresCluster, startPostgres } from './postgres.js';

/** A fresh database of one store kind. */
export interface TestDatabase {
  store: SyncStore;
  /** The GraphQL layer's reads over this database (db/reads.ts), on the writer's connection or pool. */
  reads: Reads;
  /** Webhook delivery's reads and writes over this database (db/webhookStore.ts). */
  webhooks: WebhookStore;
  /** The `--db` value of a CLI run on it (a PostgreSQL URL holds the test cluster's password). */
  db: string;
  /** Rows of `sql` (`?` parameters), values made {@link plain}; none for a statement that returns none. */
  rows<T = Record<string, unknown>>(sql: string, ...args: unknown[]): Promise<T[]>;
  /**
   * True when no transaction is left open: the SQLite connection is not in one, every PostgreSQL
   * client is back in the pool (a failed write must end its transaction, not leave it to the next).
   */
  idle(): boolean;
  /** MBIDs held in the current state, per status (db/currentQueries.ts `currentCounts` or its twin). */
  currentCounts(): Promise<Record<CurrentStatus, number>>;
  /** Closes the store's connections (the database stays). */
  close(): Promise<void>;
}

/** One of the two stores, for a suite's body. */
export interface StoreKind {
  kind: 'sqlite' | 'postgres';
  /** A new empty database (migrated), its SQLite file under `dataDir` or a new PostgreSQL database. */
  create(dataDir: string): Promise<TestDatabase>;
}

/**
 * A value as both stores give it: booleans as 1/0 (SQLite has none) and bytes (PostgreSQL `bytea`)
 * as the UTF-8 text SQLite keeps.
 */
export function plain(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return value;
}

function plainRow<T>(row: Record<string, unknown>): T {
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, plain(value)])) as T;
}

/**
 * The sync writer of `store`: itself when it is one (either store's `SyncStore`), else SQLite's
 * over a plain SQLite store; for fixtures that fill either store.
 */
export function syncWriterOf(store: Store | SyncStore): SyncStore {
  return 'ingestDump' in store ? store : sqliteSyncStore(store);
}

/** The SQLite store kind, for a reference run outside {@link describeStores}. */
export const SQLITE_STORES: StoreKind = {
  kind: 'sqlite',
  async create(dataDir) {
    const path = join(dataDir, 'livefeed.db');
    const store = sqliteSyncStore(openStore(path));
    return {
      store,
      reads: sqliteReads(store),
      webhooks: sqliteWebhookStore(store),
      db: path,
      rows: async (sql, ...args) => {
        const statement = store.sqlite.prepare(sql);
        if (!statement.reader) {
          statement.run(...args);
          return [];
        }
        return (statement.all(...args) as Record<string, unknown>[]).map((row) => plainRow(row));
      },
      idle: () => !store.sqlite.inTransaction,
      currentCounts: async () => currentCounts(store),
      close: async () => store.close(),
    };
  },
};

let databases = 0;

function postgresKind(cluster: () => PostgresCluster): StoreKind {
  return {
    kind: 'postgres',
    async create() {
      const { url } = await cluster().createDatabase(`stores_${process.pid}_${++databases}`);
      const store = await openPostgresStore({ connectionString: url, display: redactDatabaseUrl(url) });
      return {
        store: postgresSyncStore(store),
        reads: postgresReads(store),
        webhooks: postgresWebhookStore(store),
        db: url,
        rows: async (sql, ...args) =>
          (await pgRows<Record<string, unknown>>(store.pool, sql, args)).map((row) => plainRow(row)),
        idle: () => store.pool.idleCount === store.pool.totalCount,
        currentCounts: () => currentCountsPostgres(store.pool),
        close: () => store.close(),
      };
    },
  };
}

/**
 * `describe(name)` twice: on SQLite, and on PostgreSQL with a throw-away cluster started for the
 * suite (skipped, saying why, only on a machine without PostgreSQL: describePostgres).
 */
export function describeStores(name: string, body: (stores: StoreKind) => void): void {
  describe(`${name} [SQLite]`, () => body(SQLITE_STORES));
  describePostgres(`${name} [PostgreSQL]`, () => {
    let cluster: PostgresCluster | undefined;
    beforeAll(async () => {
      cluster = await startPostgres();
    }, 60_000);
    afterAll(() => cluster?.stop());
    body(postgresKind(() => cluster!));
  });
}

/** What a sync leaves in a database, without what differs between two equally good runs (times, attempts). */
const SNAPSHOT: Record<string, string> = {
  packets:
    'SELECT number, timestamp, schema_sequence, synced_at IS NOT NULL AS complete FROM packets ORDER BY number',
  dumps:
    'SELECT packet, entity, status, change_count, quarantine_count, file_name, error, settled_by FROM dumps ORDER BY packet, entity',
  quarantine: 'SELECT packet, entity, line, raw, reason FROM quarantine ORDER BY packet, entity, line',
  feed_files:
    'SELECT name, packet, size, sha256, signature, fingerprint, stored_path, signature_stored_path FROM feed_files ORDER BY name',
  events: 'SELECT packet, kind, message FROM events ORDER BY packet, kind, message',
  replication_packets:
    'SELECT packet, status, format, schema_sequence, timestamp, dbmirror_version, row_count, file_name, error FROM replication_packets ORDER BY packet',
  removals: 'SELECT mbid, entity, packet, kind, merged_into FROM removals ORDER BY packet, mbid, kind',
  meta: "SELECT key, value FROM meta WHERE key IN ('latest_packet', 'upstream_latest') ORDER BY key",
};

/** JSON text (SQLite) or a parsed jsonb value (PostgreSQL) as one canonical text: keys sorted. */
function canonicalJson(value: unknown): string | null {
  if (value === null) return null;
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sorted(typeof value === 'string' ? JSON.parse(value) : value));
}

/** Rows of `sql` as a count and a digest (too big to print in a failed assertion). */
async function digest(
  db: Pick<TestDatabase, 'rows'>,
  sql: string,
  map = (row: Record<string, unknown>) => row,
) {
  const rows = await db.rows(sql);
  const hash = createHash('sha256');
  for (const row of rows) hash.update(`${JSON.stringify(map(row))}\n`);
  return { count: rows.length, sha256: hash.digest('hex') };
}

/**
 * The comparable content of `db`: the bookkeeping tables row by row, `changes` and `row_changes`
 * as a count and a digest of their rows (row changes' JSON canonical: SQLite keeps JSON text,
 * PostgreSQL jsonb). Equal for two stores holding the same sync.
 */
export async function snapshotStore(db: Pick<TestDatabase, 'rows'>): Promise<Record<string, unknown>> {
  const snapshot: Record<string, unknown> = {};
  for (const [table, sql] of Object.entries(SNAPSHOT)) snapshot[table] = await db.rows(sql);
  snapshot.changes = await digest(
    db,
    'SELECT id, packet, entity, position, mbid, data FROM changes ORDER BY id',
  );
  snapshot.row_changes = await digest(
    db,
    'SELECT packet, ord, seqid, xid, table_name, op, keys, old_data, new_data, timestamp FROM row_changes ORDER BY packet, ord',
    (row) => ({
      ...row,
      keys: canonicalJson(row.keys),
      old_data: canonicalJson(row.old_data),
      new_data: canonicalJson(row.new_data),
    }),
  );
  return snapshot;
}

/** Dumps visible in a half state, on either store (test/support/dbSnapshot.ts halfDumpLines). */
export async function halfDumpsOf(db: TestDatabase): Promise<string[]> {
  return halfDumpLines(
    await db.rows<DumpCounts>(HALF_DUMP_SQL),
    await db.rows<{ dump: string }>(ORPHAN_DUMP_SQL),
  );
}

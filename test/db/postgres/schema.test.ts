import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore } from '../../../src/db/client.js';
import {
  openPostgresStore,
  POSTGRES_MIGRATIONS_FOLDER,
  type PostgresStore,
} from '../../../src/db/postgres/client.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

/** Number of migrations in drizzle/postgres/meta/_journal.json. */
const migrationCount = () =>
  (
    JSON.parse(readFileSync(join(POSTGRES_MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
      entries: unknown[];
    }
  ).entries.length;

/** Tables of a SQLite store and their columns, the FTS5 shadow tables and bookkeeping left out. */
function sqliteLayout(): Map<string, string[]> {
  const store = openStore(':memory:');
  try {
    const tables = store.sqlite
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
           AND name NOT LIKE '\\_\\_%' ESCAPE '\\' AND name NOT LIKE 'search_index_%' ORDER BY name`,
      )
      .pluck()
      .all() as string[];
    return new Map(
      tables.map((table) => [
        table,
        (store.sqlite.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name).sort(),
      ]),
    );
  } finally {
    store.close();
  }
}

/** Tables of the `public` schema and their columns. */
async function postgresLayout(store: PostgresStore): Promise<Map<string, string[]>> {
  const { rows } = await store.pool.query<{ table: string; column: string }>(
    `SELECT table_name AS table, column_name AS column FROM information_schema.columns
     WHERE table_schema = 'public' ORDER BY table_name, column_name`,
  );
  const layout = new Map<string, string[]>();
  for (const { table, column } of rows) layout.set(table, [...(layout.get(table) ?? []), column]);
  return layout;
}

const columnType = async (store: PostgresStore, table: string, column: string) =>
  (
    await store.pool.query<{ type: string }>(
      'SELECT data_type AS type FROM information_schema.columns WHERE table_name = $1 AND column_name = $2',
      [table, column],
    )
  ).rows[0]?.type;

describePostgres('the PostgreSQL schema and migrations (drizzle/postgres)', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('schema_test');
    store = await openPostgresStore({ connectionString: url, display: 'schema_test' });
  });
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('has every SQLite table with the same column names (the search index adds its id and document)', async () => {
    const sqlite = sqliteLayout();
    const postgres = await postgresLayout(store);
    expect([...postgres.keys()].sort()).toEqual([...sqlite.keys()].sort());
    expect(sqlite.size).toBeGreaterThanOrEqual(13);
    for (const [table, columns] of sqlite) {
      // FTS5 keys its rows by the implicit rowid; PostgreSQL names it `id` and stores the tsvector.
      // SQLite keeps each line's name for its page of search hits (drizzle/sqlite/0011_change_names.sql);
      // PostgreSQL reads it from the line's jsonb there, parsed once per line in the same statement.
      const expected =
        table === 'search_index'
          ? [...columns, 'document', 'id'].sort()
          : table === 'changes'
            ? columns.filter((column) => column !== 'name')
            : columns;
      expect(postgres.get(table), table).toEqual(expected);
    }
  });

  it('uses PostgreSQL types where SQLite has one storage class', async () => {
    expect(await columnType(store, 'changes', 'id')).toBe('bigint');
    expect(await columnType(store, 'changes', 'data')).toBe('text');
    expect(await columnType(store, 'quarantine', 'raw')).toBe('bytea');
    expect(await columnType(store, 'packets', 'timestamp')).toBe('text');
    expect(await columnType(store, 'feed_files', 'size')).toBe('bigint');
    expect(await columnType(store, 'row_changes', 'new_data')).toBe('jsonb');
    expect(await columnType(store, 'search_index', 'document')).toBe('tsvector');
    const { rows } = await store.pool.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
       WHERE indexname IN ('search_index_document', 'row_changes_entity_row', 'changes_mbid') ORDER BY 1`,
    );
    expect(rows.map((r) => r.name)).toEqual([
      'changes_mbid',
      'row_changes_entity_row',
      'search_index_document',
    ]);
    expect(rows[2]!.definition).toMatch(/USING gin \(document\)/);
    // The twin of SQLite's index on mbid, which ends with the rowid: seeks by MBID in id order.
    expect(rows[0]!.definition).toMatch(/USING btree \(mbid, id\)/);
  });

  it('compresses stored lines with lz4 where the server has it (drizzle/postgres/0003), and reads them back whole', async () => {
    const { rows } = await store.pool.query<{ lz4: boolean; method: string }>(
      `SELECT 'lz4' = ANY (s.enumvals) AS lz4, a.attcompression AS method
       FROM pg_settings s, pg_attribute a
       WHERE s.name = 'default_toast_compression' AND a.attrelid = 'changes'::regclass AND a.attname = 'data'`,
    );
    // 'l': lz4; '' the server's default (pglz).
    expect(rows[0]!.method).toBe(rows[0]!.lz4 ? 'l' : '');
    const line = JSON.stringify({ id: 'f0000000-0000-4000-8000-000000000001', text: 'ab'.repeat(20_000) });
    await store.pool.query(
      `INSERT INTO changes (id, packet, entity, position, mbid, data) VALUES (1, 1, 'artist', 1, 'f0000000-0000-4000-8000-000000000001', $1)`,
      [line],
    );
    const stored = await store.pool.query<{ data: string; method: string | null }>(
      'SELECT data, pg_column_compression(data) AS method FROM changes WHERE id = 1',
    );
    expect(stored.rows[0]).toEqual({ data: line, method: rows[0]!.lz4 ? 'lz4' : 'pglz' });
    await store.pool.query('DELETE FROM changes WHERE id = 1');
  });

  it('matches search terms without case or diacritics, a name match ranked above a disambiguation match', async () => {
    await store.pool.query(
      `INSERT INTO search_index (id, name, sort_name, aliases, disambiguation) VALUES
         (1, 'Björk', 'Björk', 'Bjork Gudmundsdottir', NULL),
         (2, 'The Sugarcubes', 'Sugarcubes, The', NULL, 'band with björk')`,
    );
    const { rows } = await store.pool.query<{ id: number }>(
      `SELECT id FROM search_index, plainto_tsquery('simple', livefeed_unaccent($1)) q
       WHERE document @@ q ORDER BY ts_rank('{0.1, 0.3, 0.5, 1.0}', document, q) DESC`,
      ['BJÖRK'],
    );
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
  });

  it('applies each migration once, also when several processes open a new database at once', async () => {
    const { url } = await cluster!.createDatabase('schema_race');
    const stores = await Promise.all(
      [1, 2, 3].map(() => openPostgresStore({ connectionString: url, display: 'schema_race' })),
    );
    const again = await openPostgresStore({ connectionString: url, display: 'schema_race' });
    const { rows } = await again.pool.query<{ n: number }>(
      'SELECT count(*) AS n FROM drizzle.__drizzle_migrations',
    );
    // Every migration of the journal, each once (the lead renumbers them when branches merge).
    expect(rows[0]!.n).toBe(migrationCount());
    await Promise.all([...stores, again].map((s) => s.close()));
  });

  it('names the database, never its password, when it cannot open it', async () => {
    const wrong = `postgres://livefeed_test:wrong-secret@127.0.0.1:${cluster!.port}/schema_test`;
    const error = await openPostgresStore({
      connectionString: wrong,
      display: 'postgres://livefeed_test:***@host/schema_test',
    }).catch((e: Error) => e);
    expect((error as Error).message).toMatch(
      /^cannot open database postgres:\/\/livefeed_test:\*\*\*@host\/schema_test: .*password authentication failed/,
    );
    expect((error as Error).message).not.toContain('wrong-secret');
  });
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { migrationTime } from '../../support/migrations.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

// The search index's document as drizzle/postgres/0001 computed it: four calls for every column.
const FORMULA_0001 = `
  setweight(to_tsvector('simple', livefeed_unaccent(coalesce(name, ''))), 'A') ||
  setweight(to_tsvector('simple', livefeed_unaccent(coalesce(sort_name, ''))), 'B') ||
  setweight(to_tsvector('simple', livefeed_unaccent(coalesce(aliases, ''))), 'C') ||
  setweight(to_tsvector('simple', livefeed_unaccent(coalesce(disambiguation, ''))), 'D')`;

// Values of each column: none, empty, words (with diacritics, repeated, mixed case), no word at all.
const VALUES = [null, '', 'Björk Guðmundsdóttir', 'The The', '!!! —', 'Hüzzam Şarkı (live)'];

/** Every combination of {@link VALUES} over the four columns, with ids from `first`. */
function rows(first: number): unknown[][] {
  const out: unknown[][] = [];
  for (const name of VALUES)
    for (const sortName of VALUES)
      for (const aliases of VALUES)
        for (const disambiguation of VALUES)
          out.push([first + out.length, name, sortName, aliases, disambiguation]);
  return out;
}

async function insert(store: PostgresStore, first: number): Promise<number> {
  const all = rows(first);
  await store.pool.query(
    `INSERT INTO search_index (id, name, sort_name, aliases, disambiguation)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])`,
    [0, 1, 2, 3, 4].map((column) => all.map((row) => row[column])),
  );
  return all.length;
}

/** Rows whose document differs from {@link FORMULA_0001}'s, and the rows counted. */
async function differing(store: PostgresStore): Promise<{ differ: number; total: number }> {
  const {
    rows: [row],
  } = await store.pool.query<{ differ: number; total: number }>(
    `SELECT count(*) FILTER (WHERE document::text IS DISTINCT FROM (${FORMULA_0001})::text)::int AS differ,
       count(*)::int AS total FROM search_index`,
  );
  return row!;
}

describePostgres('the search index document (drizzle/postgres/0004)', () => {
  let cluster: PostgresCluster | undefined;
  let url: string;
  beforeAll(async () => {
    cluster = await startPostgres();
    ({ url } = await cluster.createDatabase('search_document'));
  });
  afterAll(() => cluster?.stop());

  const open = () => openPostgresStore({ connectionString: url, display: 'search_document' });

  it('is what 0001 computed for every mix of null, empty, wordless and accented columns, before and after the upgrade', async () => {
    let store = await open();
    // The database as a version before 0004 left it: 0001's column, rows indexed with it.
    await store.pool.query(`ALTER TABLE search_index DROP COLUMN document;
      ALTER TABLE search_index ADD COLUMN document tsvector GENERATED ALWAYS AS (${FORMULA_0001}) STORED;
      CREATE INDEX search_index_document ON search_index USING gin (document)`);
    await store.pool.query('DELETE FROM drizzle.__drizzle_migrations WHERE created_at = $1', [
      migrationTime('search_document_skips_empty', 'postgres'),
    ]);
    const before = await insert(store, 1);
    await store.close();

    store = await open();
    try {
      const after = await insert(store, 10_000);
      expect(await differing(store)).toEqual({ differ: 0, total: before + after });
      const { rows: found } = await store.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM search_index WHERE document @@ plainto_tsquery('simple', livefeed_unaccent('bjork'))`,
      );
      // Each row with Björk in any of its four columns, once per upgrade side.
      expect(found[0]!.n).toBe(2 * (VALUES.length ** 4 - (VALUES.length - 1) ** 4));
      const { rows: index } = await store.pool.query<{ definition: string }>(
        `SELECT indexdef AS definition FROM pg_indexes WHERE indexname = 'search_index_document'`,
      );
      expect(index[0]?.definition).toMatch(/USING gin \(document\)/);
    } finally {
      await store.close();
    }
  });
});

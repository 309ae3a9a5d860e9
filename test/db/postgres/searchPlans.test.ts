import { afterAll, beforeAll, expect, it } from 'vitest';
import { dumpIdRange } from '../../../src/db/keys.js';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { INDEX_STATEMENTS, indexStagedDump, SEARCH_STAGE } from '../../../src/db/postgres/searchIndex.js';
import { SEARCH_STATEMENTS } from '../../../src/db/postgres/searchReads.js';
import { SearchStage } from '../../../src/sync/postgres/searchStage.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';
import { explainPlan, readPaths } from '../../support/postgresPlans.js';

// The search index's statements touch the rows of one dump, one packet or one search, never a
// whole table: each read of `changes`, `removals` and `search_index` must be an index read
// (sequential scans off, so that the plan of a test table is the plan of a large one).
describePostgres('the plans of the PostgreSQL search index and reads (indexes only)', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  const [first, last] = dumpIdRange(100, 'artist');
  const plan = (text: string, values: unknown[], before?: string) => explainPlan(store, text, values, before);
  // The indexes a plan reads, and any table it reads whole.
  const scans = readPaths;

  beforeAll(async () => {
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('search_plans');
    store = await openPostgresStore({ connectionString: url, display: 'search_plans' });
    // A JSON dump of 30,000 artists, "Artist <n> word<n % 1000>", indexed by the real statements.
    await store.pool.query(
      `INSERT INTO changes (id, packet, entity, position, mbid, data)
       SELECT $1::bigint + n, 100, 'artist', n, m.mbid,
         json_build_object('id', m.mbid, 'name', 'Artist ' || n || ' word' || (n % 1000), 'sort-name', 'Artist')::text
       FROM generate_series(1, 30000) n
       CROSS JOIN LATERAL (SELECT 'a0000000-0000-4000-8000-' || lpad(n::text, 12, '0') AS mbid) m`,
      [first],
    );
    await store.pool.query(
      `INSERT INTO removals (mbid, entity, packet, kind)
       SELECT 'a0000000-0000-4000-8000-' || lpad(n::text, 12, '0'), 'artist', 101, 'DELETED' FROM generate_series(1, 500) n`,
    );
    // Staged as the ingest stages lines it cannot read in JS: their columns read from the lines.
    const client = await store.pool.connect();
    await client.query('BEGIN');
    await new SearchStage().create(client);
    await client.query(
      `INSERT INTO pg_temp.${SEARCH_STAGE} (id, mbid, reparse) SELECT id, mbid, true FROM changes WHERE id BETWEEN $1 AND $2`,
      [first, last],
    );
    await indexStagedDump(client, { first, last, packet: 100 });
    await client.query('COMMIT');
    client.release();
    await store.pool.query('ANALYZE changes; ANALYZE removals; ANALYZE search_index');
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('indexes a dump, a dump stored again and a packet through the indexes', async () => {
    const range = [first, last];
    // The stage holds the dump's own lines: read whole, as they were written.
    const stage = `${SEARCH_STAGE}:Seq Scan`;
    const staged = `CREATE TEMP TABLE ${SEARCH_STAGE} AS SELECT id, mbid, NULL::text AS name,
      NULL::text AS sort_name, NULL::text AS aliases, NULL::text AS disambiguation, false AS reparse FROM changes`;
    const cases = [
      [INDEX_STATEMENTS.DROP_COPY, range, ['search_index_pkey']],
      [INDEX_STATEMENTS.RESTORE_PREVIOUS, range, ['changes_mbid', 'changes_pkey', 'removals_mbid']],
      // The versions a later dump (first id `last + 1`) replaces: every stored line is one.
      [INDEX_STATEMENTS.DROP_PREVIOUS, [last + 1], ['changes_mbid', 'search_index_pkey', stage]],
      // The removals of the dump's packet or later, a range of their primary key, joined to the stage.
      [INDEX_STATEMENTS.ADD_STAGED, [100], ['changes_mbid', 'removals_packet_mbid_kind_pk', stage]],
      [
        INDEX_STATEMENTS.ADD_REPARSED,
        [100],
        ['changes_mbid', 'changes_pkey', 'removals_packet_mbid_kind_pk', stage],
      ],
      // No change stored after the dump: the stage alone tells the newest lines.
      [INDEX_STATEMENTS.NEIGHBOURS, range, ['changes_pkey']],
      [INDEX_STATEMENTS.DROP_PREVIOUS_WITHIN_STAGE, [last + 1], ['changes_mbid', 'search_index_pkey', stage]],
      [INDEX_STATEMENTS.ADD_STAGED_WITHIN_STAGE, [100], ['removals_packet_mbid_kind_pk', stage]],
      [
        INDEX_STATEMENTS.ADD_REPARSED_WITHIN_STAGE,
        [100],
        ['changes_pkey', 'removals_packet_mbid_kind_pk', stage],
      ],
      [INDEX_STATEMENTS.DROP_REMOVED, [101], ['changes_mbid', 'removals_mbid', 'search_index_pkey']],
      [INDEX_STATEMENTS.RESTORE_REMOVED, [101], ['changes_mbid', 'changes_pkey', 'removals_mbid']],
    ] as const;
    const found = [];
    for (const [text, values] of cases) {
      const before = text.includes(SEARCH_STAGE) ? staged : undefined;
      found.push(scans(await plan(text, [...values], before)));
    }
    expect(found).toEqual(cases.map(([, , expected]) => [...expected].sort()));
  });

  it('a search reads search_index through its GIN index and each hit line by its id', async () => {
    const query = "'word7':*";
    const ranked = await plan(SEARCH_STATEMENTS.RANKED.text, [query, null, [query], null, null, 20, [1]]);
    expect(scans(ranked)).toEqual(['changes_pkey', 'search_index_document']);
    const count = await plan(SEARCH_STATEMENTS.COUNT.text, [query, [0]]);
    expect(scans(count)).toEqual(['search_index_document']);
    // On the data: "word7" starts 111 of the 1,000 words, each in 30 names; of them 11 artists
    // (n = 7, 70..79) are deleted by packet 101, so not indexed.
    const { rows } = await store.pool.query({ ...SEARCH_STATEMENTS.COUNT, values: [query, null] });
    expect(rows).toEqual([[111 * 30 - 11]]);
  });
});

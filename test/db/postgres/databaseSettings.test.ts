/**
 * The PostgreSQL store on databases made otherwise than the test clusters' (`initdb
 * --locale=C.UTF-8`, a superuser): a collation that ignores punctuation, as glibc's `en_US.UTF-8`
 * (the `postgres` image's default) does; an LC_CTYPE of `C`; a role that may only read (issue 17:
 * many stateless `serve` processes).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresStore } from '../../../src/db/postgres/client.js';
import { postgresReads } from '../../../src/db/postgres/reads.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

describePostgres('PostgreSQL databases with other locales and roles', () => {
  let cluster: PostgresCluster | undefined;
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 60_000);
  afterAll(() => cluster?.stop());

  const open = (url: string, display: string) => openPostgresStore({ connectionString: url, display });

  it('lists a packet’s tables in code point order where the database’s collation ignores `_`', async () => {
    // ICU's root locale with punctuation ignorable (alternate=shifted) sorts as en_US.UTF-8 does.
    const { url } = await cluster!.createDatabase(
      'punctuation_ignored',
      "TEMPLATE template0 LOCALE 'C.UTF-8' LOCALE_PROVIDER icu ICU_LOCALE 'und-u-ka-shifted'",
    );
    const store = await open(url, 'punctuation_ignored');
    try {
      await store.pool.query(`INSERT INTO packets (number, created_at) VALUES (7, now()::text);
        INSERT INTO row_changes (packet, ord, seqid, xid, table_name, op) VALUES
          (7, 1, 1, 1, 'musicbrainz.label', 'i'), (7, 2, 2, 1, 'musicbrainz.l_artist_artist', 'd'),
          (7, 3, 3, 1, 'musicbrainz.l_artist_artist', 'i')`);
      // The premise: this database's own order puts `label` first.
      const { rows } = await store.pool.query<{ t: string }>(
        'SELECT DISTINCT table_name AS t FROM row_changes ORDER BY t',
      );
      expect(rows.map((r) => r.t)).toEqual(['musicbrainz.label', 'musicbrainz.l_artist_artist']);
      expect(await postgresReads(store).tableChangesOf(7)).toEqual([
        { table: 'musicbrainz.l_artist_artist', inserts: 1, updates: 0, deletes: 1 },
        { table: 'musicbrainz.label', inserts: 1, updates: 0, deletes: 0 },
      ]);
    } finally {
      await store.close();
    }
  });

  it('refuses a database that lowercases ASCII letters only (LC_CTYPE C), naming the fix', async () => {
    const { url } = await cluster!.createDatabase('ctype_c', "TEMPLATE template0 LOCALE 'C' ENCODING 'UTF8'");
    // The premise: `simple` keeps Cyrillic capitals there, so `кино` would not find `КИНО`.
    expect((await cluster!.psql('ctype_c', "SELECT to_tsvector('simple', 'КИНО')")).trim()).toBe("'КИНО':1");
    await expect(open(url, 'ctype_c')).rejects.toThrow(
      /^cannot open database ctype_c: the database's LC_CTYPE is C: .* LOCALE 'C\.UTF-8'.*see the README, PostgreSQL$/,
    );
  });

  it('serves a migrated database to a role that may read and not create', async () => {
    const { url } = await cluster!.createDatabase('read_only_role');
    (await open(url, 'read_only_role')).close();
    await cluster!.psql(
      'read_only_role',
      `CREATE ROLE reader LOGIN PASSWORD 'reader-pw';
       REVOKE CREATE ON SCHEMA public FROM PUBLIC; REVOKE CREATE ON DATABASE read_only_role FROM PUBLIC;
       GRANT USAGE ON SCHEMA public, drizzle TO reader;
       GRANT SELECT ON ALL TABLES IN SCHEMA public, drizzle TO reader`,
    );
    const readerUrl = url.replace(/\/\/[^@]*@/, '//reader:reader-pw@');
    const store = await open(readerUrl, 'read_only_role as reader');
    try {
      expect(await postgresReads(store).latestPacket()).toBeUndefined();
      await expect(store.pool.query('CREATE TABLE t (x int)')).rejects.toThrow(/permission denied/);
    } finally {
      await store.close();
    }
  });
});

import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/db/client.js';
import { changeId } from '../../../src/db/keys.js';
import { openPostgresStore, type PostgresStore } from '../../../src/db/postgres/client.js';
import { importJsonDump } from '../../../src/sync/import.js';
import { importJsonDumpPostgres } from '../../../src/sync/postgres/import.js';
import { ingestJsonDumpPostgres } from '../../../src/sync/postgres/ingest.js';
import { writeJsonDump } from '../../support/archives.js';
import { tempDir } from '../../support/harness.js';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

// The lines of test/importCommand.test.ts, and bytes that test the COPY format: a raw 0x01 and 0x02
// inside a JSON string (its quote and delimiter: the line is stored re-escaped), a raw NUL in a
// refused line (quarantined as bytea, byte for byte) and in upper-case MBID.
const lines = [
  JSON.stringify({ id: id(1), name: 'Line\u2028sep \u2029para \u0085nel' }),
  JSON.stringify({ name: 'Long', id: id(2), media: [{ tracks: 'x'.repeat(3 * 1024 * 1024) }] }),
  `{"name": "Carriage\rReturn",   "id":"${id(3)}"}`,
  'not json at all',
  JSON.stringify({ id: 'not-an-mbid' }),
  '',
  `{"id": "${id(4)}", "name": "quote\u0001and\u0002delimiter"}`,
  'nul\u0000byte',
  `{"id": "${id(5).toUpperCase()}", "tab":\t"x"}\r`,
  ...Array.from({ length: 5000 }, (_, i) =>
    JSON.stringify({ 'sort-name': `Artist ${i}`, id: id(100 + i), n: i }),
  ),
  `{"id": "${id(9)}", "nested": {"id": "x"}, "list": [1, -2.5e3, true, false, null, "\\u00e9\\n"]}`,
];

interface Row {
  id: number;
  position: number;
  mbid: string;
  data: string;
}

describePostgres('the PostgreSQL ingest of a JSON dump (COPY, one transaction)', () => {
  let cluster: PostgresCluster | undefined;
  let store: PostgresStore;
  let sqlite: Store;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let archive: string;
  const rows = async (packet: number) =>
    (
      await store.pool.query<Row>(
        'SELECT id, position, mbid, data FROM changes WHERE packet = $1 ORDER BY id',
        [packet],
      )
    ).rows;

  beforeAll(async () => {
    dir = await tempDir('pg-ingest-');
    archive = (await writeJsonDump(dir.dir, { packet: 777, entity: 'artist', lines })).path;
    cluster = await startPostgres();
    const { url } = await cluster.createDatabase('ingest_test');
    store = await openPostgresStore({ connectionString: url, display: 'ingest_test' });
    sqlite = openStore(join(dir.dir, 'twin.sqlite'));
    await importJsonDump(sqlite, { path: archive, packet: 777 });
  });
  afterAll(async () => {
    sqlite?.close();
    await store?.close();
    await cluster?.stop();
    await dir?.cleanup();
  });

  it('stores the same changes and quarantine as the SQLite ingest, byte for byte', async () => {
    const result = await importJsonDumpPostgres(store, { path: archive, packet: 777 });
    expect(result).toMatchObject({
      entity: 'artist',
      lineCount: lines.length,
      changeCount: lines.length - 4,
      quarantineCount: 4,
    });
    const twin = sqlite.sqlite
      .prepare('SELECT id, position, mbid, data FROM changes ORDER BY id')
      .all() as Row[];
    const stored = await rows(777);
    expect(stored).toHaveLength(lines.length - 4);
    expect(stored).toEqual(twin);
    expect(stored[0]).toEqual({ id: changeId(777, 'artist', 1), position: 1, mbid: id(1), data: lines[0] });
    expect(stored[1]!.data).toBe(lines[1]);
    expect(JSON.parse(stored.find((r) => r.mbid === id(4))!.data).name).toBe('quote\u0001and\u0002delimiter');
    expect(stored.find((r) => r.position === 9)).toMatchObject({ mbid: id(5).toUpperCase(), data: lines[8] });

    const quarantined = await store.pool.query<{ line: number; raw: Buffer; reason: string }>(
      'SELECT line, raw, reason FROM quarantine WHERE packet = 777 ORDER BY line',
    );
    const twinQuarantine = sqlite.sqlite
      .prepare('SELECT line, raw, reason FROM quarantine ORDER BY line')
      .all();
    expect(quarantined.rows.map((q) => ({ ...q, raw: q.raw.toString('utf8') }))).toEqual(twinQuarantine);
    expect(quarantined.rows.find((q) => q.line === 8)!.raw).toEqual(Buffer.from('nul\u0000byte'));
  });

  it('records the dump SYNCED and its packet facts as the SQLite ingest does', async () => {
    const dump = await store.pool.query(
      'SELECT status, change_count, quarantine_count, file_name FROM dumps WHERE packet = 777',
    );
    expect(dump.rows).toEqual([
      { status: 'SYNCED', change_count: lines.length - 4, quarantine_count: 4, file_name: null },
    ]);
    const packet = await store.pool.query<{ timestamp: string; schema_sequence: number }>(
      'SELECT timestamp, schema_sequence FROM packets WHERE number = 777',
    );
    const twin = sqlite.sqlite
      .prepare('SELECT timestamp, schema_sequence FROM packets WHERE number = 777')
      .get() as {
      timestamp: string;
      schema_sequence: number;
    };
    expect(packet.rows[0]).toEqual(twin);
  });

  it('replaces an earlier import of the same dump: nothing twice', async () => {
    const before = await rows(777);
    await importJsonDumpPostgres(store, { path: archive, packet: 777 });
    expect(await rows(777)).toEqual(before);
    const q = await store.pool.query<{ n: number }>(
      'SELECT count(*) AS n FROM quarantine WHERE packet = 777',
    );
    expect(q.rows[0]!.n).toBe(4);
  });

  it('rolls back a replacement that fails on a corrupt archive: the earlier copy stays whole', async () => {
    const before = await rows(777);
    const { readFile, writeFile } = await import('node:fs/promises');
    const bytes = await readFile(archive);
    bytes.fill(0x55, bytes.length - 2000, bytes.length - 1000);
    const corrupt = join(dir.dir, 'corrupt.tar.xz');
    await writeFile(corrupt, bytes);
    await expect(
      importJsonDumpPostgres(store, { path: corrupt, packet: 777, entity: 'artist' }),
    ).rejects.toThrow();
    expect(await rows(777)).toEqual(before);
  });

  it('stores nothing when aborted halfway, and the connection is usable again', async () => {
    const other = (await writeJsonDump(join(dir.dir, 'other'), { packet: 778, entity: 'artist', lines }))
      .path;
    const abort = new AbortController();
    const attempt = importJsonDumpPostgres(store, {
      path: other,
      packet: 778,
      signal: abort.signal,
      onProgress: (read, total) => {
        if (read > total / 3) abort.abort(new Error('stopped by the test'));
      },
    });
    await expect(attempt).rejects.toMatchObject({
      name: 'AbortError',
      cause: new Error('stopped by the test'),
    });
    expect(await rows(778)).toEqual([]);
    const dumps = await store.pool.query('SELECT * FROM dumps WHERE packet = 778');
    expect(dumps.rows).toEqual([]);
    await importJsonDumpPostgres(store, { path: other, packet: 778 });
    expect(await rows(778)).toHaveLength(lines.length - 4);
  });

  it('an abort at any moment, or a signature refused while awaited, rejects and stores nothing (never a silent end)', async () => {
    const other = (await writeJsonDump(join(dir.dir, 'timing'), { packet: 780, entity: 'artist', lines }))
      .path;
    const base = { packet: 780, entity: 'artist' as const, archivePath: other, file: null };
    // Before the first line, at once, after the first turn of the event loop, and a little later.
    for (const when of ['before', 'at once', 'next turn', '20 ms']) {
      const abort = new AbortController();
      const stop = () => abort.abort(new Error(`stopped ${when}`));
      if (when === 'before') stop();
      const attempt = ingestJsonDumpPostgres(store, { ...base, signal: abort.signal });
      if (when === 'at once') stop();
      if (when === 'next turn') setImmediate(stop);
      if (when === '20 ms') setTimeout(stop, 20);
      await expect(attempt, when).rejects.toThrow();
      expect(await rows(780), when).toEqual([]);
    }
    // The bootstrap's way: the signature check settles after the last line and refuses.
    const refused = ingestJsonDumpPostgres(store, {
      ...base,
      settle: () => Promise.reject(new Error('signature refused')),
    });
    await expect(refused).rejects.toThrow('signature refused');
    expect(await rows(780)).toEqual([]);
    const dumps = await store.pool.query('SELECT * FROM dumps WHERE packet = 780');
    expect(dumps.rows).toEqual([]);
  });

  it('bounds the quarantined lines held during the COPY: more than 8 MiB of them all stored, in order, while the COPY waits for drain', async () => {
    // Large good lines fill COPY chunks, so the COPY stream asks to wait for 'drain' while the
    // quarantined lines pass the bound and a new COPY starts.
    const bad = 'b'.repeat(300 * 1024);
    const mixed = Array.from({ length: 64 }, (_, i) =>
      i % 2 === 0 ? `${bad}${i}` : JSON.stringify({ id: id(20_000 + i), pad: 'g'.repeat(300 * 1024), i }),
    );
    const path = (await writeJsonDump(join(dir.dir, 'mixed'), { packet: 779, entity: 'label', lines: mixed }))
      .path;
    const result = await importJsonDumpPostgres(store, { path, packet: 779 });
    expect(result).toMatchObject({ changeCount: 32, quarantineCount: 32 });
    const stored = await rows(779);
    expect(stored.map((r) => r.position)).toEqual(Array.from({ length: 32 }, (_, i) => 2 + 2 * i));
    expect(stored.map((r) => r.data)).toEqual(mixed.filter((_, i) => i % 2 === 1));
    const q = await store.pool.query<{ line: number; n: number }>(
      'SELECT line, length(raw) AS n FROM quarantine WHERE packet = 779 ORDER BY line',
    );
    expect(q.rows.map((r) => r.line)).toEqual(Array.from({ length: 32 }, (_, i) => 1 + 2 * i));
    expect(q.rows[0]!.n).toBe(bad.length + 1);
  });
});

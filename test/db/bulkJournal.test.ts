import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isBulkLoad, withBulkJournal } from '../../src/db/bulkJournal.js';
import { openStore, type Store, TEMP_CACHE_BYTES } from '../../src/db/client.js';
import { openForServing } from '../../src/db/readOnly.js';
import { tempDir } from '../support/harness.js';

describe('withBulkJournal: a bulk load written once, with a rollback journal', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  const mode = (s: Store) => s.sqlite.pragma('journal_mode', { simple: true });

  beforeEach(async () => {
    dir = await tempDir('lf-bulk-journal-');
    store = openStore(join(dir.dir, 'livefeed.db'));
  });
  afterEach(async () => {
    store.close();
    await dir.cleanup();
  });

  it('uses a rollback journal when the connection is alone, and goes back to WAL', async () => {
    const { result, rollbackJournal } = await withBulkJournal(store, async () => {
      store.sqlite.exec("CREATE TABLE t (x); INSERT INTO t VALUES ('during')");
      // The stage and the sort go through the temp database, bounded on every writer's connection.
      expect(store.sqlite.pragma('temp.cache_size', { simple: true })).toBe(-TEMP_CACHE_BYTES / 1024);
      return mode(store);
    });
    expect(rollbackJournal).toBe(true);
    expect(result).toBe('truncate');
    expect(mode(store)).toBe('wal');
    const other = openStore(store.path);
    expect(other.sqlite.prepare('SELECT x FROM t').pluck().get()).toBe('during');
    other.close();
  });

  it("bounds a writer's temp cache; a server's connection keeps SQLite's", () => {
    expect(store.sqlite.pragma('temp.cache_size', { simple: true })).toBe(-TEMP_CACHE_BYTES / 1024);
    const server = openForServing(store.path);
    try {
      expect(server.sqlite.pragma('temp.cache_size', { simple: true })).not.toBe(-TEMP_CACHE_BYTES / 1024);
    } finally {
      server.close();
    }
  });

  it('stays in WAL mode, without waiting, when another connection has the file open', async () => {
    const reader = openStore(store.path, { readonly: true });
    reader.sqlite.prepare('SELECT count(*) FROM sqlite_master').get();
    const started = Date.now();
    const { result, rollbackJournal } = await withBulkJournal(store, async () => mode(store));
    expect(rollbackJournal).toBe(false);
    expect(result).toBe('wal');
    expect(Date.now() - started).toBeLessThan(4000); // not the 5 s busy timeout
    reader.close();
  });

  it('goes back to WAL when the work fails, and the failed transaction left nothing', async () => {
    store.sqlite.exec('CREATE TABLE t (x)');
    const failing = withBulkJournal(store, async () => {
      store.sqlite.exec("BEGIN; INSERT INTO t VALUES ('lost')");
      try {
        throw new Error('bad line');
      } finally {
        store.sqlite.exec('ROLLBACK');
      }
    });
    await expect(failing).rejects.toThrow('bad line');
    expect(mode(store)).toBe('wal');
    expect(store.sqlite.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
  });

  it('a process killed (SIGKILL) in the middle of a bulk transaction leaves nothing of it once reopened', async () => {
    store.sqlite.exec("CREATE TABLE t (x); INSERT INTO t VALUES ('before')");
    store.close();
    const modules = fileURLToPath(new URL('../../src/db/', import.meta.url));
    // Enough rows to spill far past the page cache into the database file before the kill.
    const child = `
      const { openStore } = await import(${JSON.stringify(join(modules, 'client.ts'))});
      const { withBulkJournal } = await import(${JSON.stringify(join(modules, 'bulkJournal.ts'))});
      const store = openStore(${JSON.stringify(store.path)});
      await withBulkJournal(store, async () => {
        store.sqlite.exec('BEGIN');
        const insert = store.sqlite.prepare('INSERT INTO t VALUES (?)');
        for (let i = 0; i < 20000; i++) insert.run('x'.repeat(2000));
        process.kill(process.pid, 'SIGKILL');
      });`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
      encoding: 'utf8',
    });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    expect(existsSync(`${store.path}-journal`)).toBe(true); // a hot journal: the kill hit mid-transaction
    store = openStore(store.path);
    expect(store.sqlite.prepare('SELECT x FROM t').pluck().all()).toEqual(['before']);
    expect(mode(store)).toBe('wal');
  });

  it('isBulkLoad: an archive that adds about as much as the database holds, or more', () => {
    const bytes = () =>
      (store.sqlite.pragma('page_count', { simple: true }) as number) *
      (store.sqlite.pragma('page_size', { simple: true }) as number);
    expect(isBulkLoad(store, 1_000_000)).toBe(true);
    store.sqlite.exec('CREATE TABLE filler (x)');
    const insert = store.sqlite.prepare('INSERT INTO filler VALUES (zeroblob(100000))');
    for (let i = 0; i < 200; i++) insert.run();
    expect(bytes()).toBeGreaterThan(20_000_000);
    expect(isBulkLoad(store, 1_000_000)).toBe(false);
    expect(isBulkLoad(store, Math.ceil(bytes() / 8))).toBe(true);
  });
});

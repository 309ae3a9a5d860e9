import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpoint, deferCheckpoints, walBytes } from '../../src/db/checkpoint.js';
import { openStore, type Store } from '../../src/db/client.js';
import { changesInFile } from '../support/dbSnapshot.js';
import { tempDir } from '../support/harness.js';

function insertChanges(store: Store, count: number): void {
  const insert = store.sqlite.prepare(
    "INSERT INTO changes (id, packet, entity, position, mbid, data) VALUES (?, 1, 'artist', ?, ?, ?)",
  );
  store.sqlite.transaction(() => {
    for (let i = 1; i <= count; i++)
      insert.run(
        i,
        i,
        `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        `{"n":"${'x'.repeat(9000)}"}`,
      );
  })();
}

describe('deferred WAL checkpoints', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  beforeEach(async () => {
    dir = await tempDir();
    store = openStore(join(dir.dir, 'livefeed.db'));
    checkpoint(store.sqlite); // migrations out of the WAL
  });
  afterEach(async () => {
    store.close();
    await dir.cleanup();
  });

  it('commits visibly without copying into the database file, until checkpoint()', () => {
    deferCheckpoints(store.sqlite);
    insertChanges(store, 3000); // about 27 MB: past the 1000-page (16 MB) autocheckpoint
    const reader = openStore(store.path, { readonly: true });
    try {
      expect((reader.sqlite.prepare('SELECT count(*) AS n FROM changes').get() as { n: number }).n).toBe(
        3000,
      );
    } finally {
      reader.close();
    }
    expect(walBytes(store.path)).toBeGreaterThan(27_000_000);
    expect(changesInFile(store.path, dir.dir)).toBe(0);

    const result = checkpoint(store.sqlite);
    expect(result.busy).toBe(false);
    expect(result.walFrames).toBeGreaterThan(100);
    expect(result.checkpointedFrames).toBe(result.walFrames);
    expect(changesInFile(store.path, dir.dir)).toBe(3000);
  });

  it('without deferCheckpoints, SQLite checkpoints at COMMIT', () => {
    insertChanges(store, 3000);
    expect(changesInFile(store.path, dir.dir)).toBe(3000);
  });

  it('leaves the frames a reader still needs and copies them on a later checkpoint', () => {
    deferCheckpoints(store.sqlite);
    insertChanges(store, 10);
    const reader = openStore(store.path, { readonly: true });
    try {
      reader.sqlite.exec('BEGIN');
      reader.sqlite.prepare('SELECT count(*) FROM changes').get(); // holds this snapshot
      store.sqlite.prepare("UPDATE changes SET data = '{}' WHERE id = 1").run();
      const partial = checkpoint(store.sqlite);
      expect(partial.checkpointedFrames).toBeLessThan(partial.walFrames);
      reader.sqlite.exec('COMMIT');
    } finally {
      reader.close();
    }
    const full = checkpoint(store.sqlite);
    expect(full.checkpointedFrames).toBe(full.walFrames);
    expect(changesInFile(store.path, dir.dir)).toBe(10);
  });
});

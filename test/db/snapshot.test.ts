import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { openForServing } from '../../src/db/readOnly.js';
import { readSnapshot } from '../../src/db/snapshot.js';
import { tempDir } from '../support/harness.js';

describe('readSnapshot: the statements of one read see one state of the database', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let writer: Store;
  let reader: Store;
  const metaValue = (store: Store) =>
    store.sqlite.prepare("SELECT value FROM meta WHERE key = 'snapshot_test'").pluck().get() as
      | string
      | undefined;
  const write = (value: string) =>
    writer.sqlite
      .prepare(
        "INSERT INTO meta (key, value) VALUES ('snapshot_test', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      )
      .run(value);

  beforeEach(async () => {
    dir = await tempDir('lf-snapshot-');
    writer = openStore(join(dir.dir, 'livefeed.db'));
    write('before');
    reader = openForServing(writer.path);
  });
  afterEach(async () => {
    reader.close();
    writer.close();
    await dir.cleanup();
  });

  it('a commit of another connection between two statements is not seen until the read ends', () => {
    const seen = readSnapshot(reader, () => {
      const first = metaValue(reader);
      write('after'); // commits on the writer's connection, mid-read
      return [first, metaValue(reader)];
    });
    expect(seen).toEqual(['before', 'before']);
    expect(reader.sqlite.inTransaction).toBe(false);
    expect(metaValue(reader)).toBe('after');
    // Without it, each statement sees the newest commit: the mixed state the helper prevents.
    const first = metaValue(reader);
    write('later');
    expect([first, metaValue(reader)]).toEqual(['after', 'later']);
  });

  it('ends the read transaction when the read throws, and runs inside one already open', () => {
    expect(() =>
      readSnapshot(reader, () => {
        throw new Error('bad read');
      }),
    ).toThrow('bad read');
    expect(reader.sqlite.inTransaction).toBe(false);
    const nested = reader.sqlite.transaction(() => readSnapshot(reader, () => reader.sqlite.inTransaction))();
    expect(nested).toBe(true);
    expect(reader.sqlite.inTransaction).toBe(false);
  });
});

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { recordPacketFacts } from '../../src/sync/packetFacts.js';
import { tempDir } from '../support/harness.js';

describe('recordPacketFacts (schema sequence changes are events, not crashes)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  const at = '2026-11-22T00:00:00.000000Z';

  beforeAll(async () => {
    dir = await tempDir();
    store = openStore(join(dir.dir, 'livefeed.db'));
  });
  afterAll(async () => {
    store.close();
    await dir.cleanup();
  });

  it('fills a packet once and records a change of schema sequence once', () => {
    expect(
      recordPacketFacts(
        store.sqlite,
        10,
        { timestamp: '2026-05-11T00:14:26.000000Z', schemaSequence: 31 },
        at,
      ),
    ).toBeNull();
    const change = { from: 31, to: 32, previousPacket: 10 };
    expect(
      recordPacketFacts(
        store.sqlite,
        11,
        { timestamp: '2026-05-11T01:14:26.000000Z', schemaSequence: 32 },
        at,
      ),
    ).toEqual(change);
    // A second archive of packet 11 (another JSON dump, or its replication packet) adds no second event
    // and does not overwrite what is known.
    expect(
      recordPacketFacts(
        store.sqlite,
        11,
        { timestamp: '2026-05-11T09:00:00.000000Z', schemaSequence: 32 },
        at,
      ),
    ).toEqual(change);
    expect(store.sqlite.prepare("SELECT packet FROM events WHERE kind = 'schema-change'").all()).toEqual([
      { packet: 11 },
    ]);
    expect(
      store.sqlite.prepare('SELECT timestamp, schema_sequence AS s FROM packets WHERE number = 11').get(),
    ).toEqual({
      timestamp: '2026-05-11T01:14:26.000000Z',
      s: 32,
    });
  });
});

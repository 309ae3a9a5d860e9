import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import { sqliteReads } from '../../src/db/reads.js';
import { PACKET_POSITION_SQL, packetPosition } from '../../src/db/status.js';
import { STATUS_SQL } from '../../src/db/statusQueries.js';
import { tempDir } from '../support/harness.js';

/**
 * GraphiQL's example starts from the newest packet with stored changes (db/statusQueries.ts,
 * `newestDumpsWithChanges`), and `livefeed status` shows the packet counts (db/status.ts,
 * `packetPosition`): reads whose cost must not grow with the database's age (issue 16).
 * A real SQLite file with 3,000 packets of ledger rows: the newest ones synced without changes or
 * still pending, as on a live instance between two packets.
 */
describe('status reads whose cost must not grow with age, on a database of 3,000 packets', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: Store;
  const now = '2026-01-01T00:00:00.000Z';

  beforeAll(async () => {
    dir = await tempDir('lf-status-queries-');
    store = openStore(join(dir.dir, 'livefeed.db'));
    const packet = store.sqlite.prepare(
      'INSERT INTO packets (number, synced_at, created_at) VALUES (?, ?, ?)',
    );
    const dump = store.sqlite.prepare(
      'INSERT INTO dumps (packet, entity, status, change_count, updated_at) VALUES (?, ?, ?, ?, ?)',
    );
    store.sqlite.transaction(() => {
      for (let n = 1; n <= 3000; n++) {
        // Complete up to 2,995 but for 1,500, which waits for a dump.
        packet.run(n, n <= 2995 && n !== 1500 ? now : null, now);
        // Up to 2,990 each packet has artist changes and an empty label dump; then five packets
        // whose dumps are empty, then five still pending.
        const status = n > 2995 ? 'PENDING' : 'SYNCED';
        dump.run(n, 'artist', status, n <= 2990 ? 3 : 0, now);
        dump.run(n, 'label', status, 0, now);
        if (n % 7 === 0 && n <= 2990) dump.run(n, 'recording', status, 1, now);
      }
    })();
  });
  afterAll(async () => {
    store?.close();
    await dir?.cleanup();
  });

  it('names the newest packet with changes and only its dumps that have changes', async () => {
    // 2,990 is not a multiple of 7: artist alone; the read looks past the empty and pending ones.
    expect(await sqliteReads(store).newestDumpsWithChanges()).toEqual({ packet: 2990, entities: ['artist'] });
    store.sqlite.prepare("UPDATE dumps SET change_count = 0 WHERE packet = 2990 AND entity = 'artist'").run();
    try {
      expect(await sqliteReads(store).newestDumpsWithChanges()).toEqual({
        // 2,989 is 7 × 427: its recording dump has a change too.
        packet: 2989,
        entities: ['artist', 'recording'],
      });
    } finally {
      store.sqlite
        .prepare("UPDATE dumps SET change_count = 3 WHERE packet = 2990 AND entity = 'artist'")
        .run();
    }
  });

  it('walks the packets newest first by the primary key, one seek into dumps each: no sort, no status index', () => {
    const plan = store.sqlite
      .prepare(`EXPLAIN QUERY PLAN ${STATUS_SQL.newestDumpsWithChanges}`)
      .all()
      .map((row) => (row as { detail: string }).detail);
    expect(plan).toContain('SCAN p');
    expect(plan.filter((d) => d.includes('dumps'))).toEqual([
      'SEARCH dumps USING INDEX sqlite_autoindex_dumps_1 (packet=?)',
      'SEARCH d EXISTS USING INDEX sqlite_autoindex_dumps_1 (packet=?)',
    ]);
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE|dumps_status/);
  });

  it('counts the packets without stepping through them: the table counted from its pages, the incomplete ones from the status index', () => {
    expect(packetPosition(store)).toEqual({
      highest: 3000,
      firstIncomplete: 1500,
      packets: 3000,
      completed: 2994,
    });
    const opcodes = store.sqlite
      .prepare(`EXPLAIN ${PACKET_POSITION_SQL}`)
      .all()
      .map((row) => (row as { opcode: string }).opcode);
    expect(opcodes).toContain('Count');
    const plan = store.sqlite
      .prepare(`EXPLAIN QUERY PLAN ${PACKET_POSITION_SQL}`)
      .all()
      .map((row) => (row as { detail: string }).detail);
    expect(plan.filter((d) => d.startsWith('SEARCH packets USING'))).toEqual([
      'SEARCH packets USING COVERING INDEX packets_synced_at (synced_at=?)',
      'SEARCH packets USING COVERING INDEX packets_synced_at (synced_at=?)',
    ]);
  });
});

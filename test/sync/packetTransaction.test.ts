import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/client.js';
import type { EntityType } from '../../src/feed/entities.js';
import type { SampleFeed } from '../../src/samplefeed/server.js';
import type { SyncContext } from '../../src/sync/context.js';
import { inTransaction } from '../../src/sync/transaction.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { syncContext, tempDir, testLogger } from '../support/harness.js';
import { signedDumpFeed } from '../support/signedDumpFeed.js';

/**
 * Issue 16: the SQLite writer stores each packet in one transaction (src/sync/packetTransaction.ts),
 * each archive a savepoint of it: a reader on another connection sees a packet's JSON dumps appear
 * together, a dump whose signature fails is rolled back alone, and what a pass stored before it was
 * aborted stays stored.
 */

const ENTITIES: EntityType[] = ['area', 'artist', 'label'];
const BAD: [number, EntityType] = [71, 'artist'];
const line = (packet: number, n: number) =>
  JSON.stringify({
    id: `00000000-0000-4000-8000-${String(packet * 10 + n).padStart(12, '0')}`,
    name: `E${n}`,
  });

let work: Awaited<ReturnType<typeof tempDir>>;
let feed: SampleFeed;

beforeAll(async () => {
  ({ feed, work } = await signedDumpFeed(
    'lf-packettx-',
    [70, 71, 72].flatMap((packet) =>
      ENTITIES.map((entity, i) => ({
        packet,
        entity,
        lines: [line(packet, i)],
        signature: packet === BAD[0] && entity === BAD[1] ? ('other bytes' as const) : ('good' as const),
      })),
    ),
  ));
}, 60_000);
afterAll(async () => {
  await feed?.close();
  await work?.cleanup();
});

/** A verifying sync of packets 70..72 into a new SQLite file under `dir`, and a reader on that file. */
async function contextIn(dir: string, signal?: AbortSignal) {
  const dataDir = join(work.dir, dir);
  const logger = testLogger();
  const ctx = await syncContext({
    feedRoot: feed.feedRoot,
    dataDir,
    entities: ENTITIES,
    logger,
    signal,
    verifier: await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger),
  });
  const reader = openStore(join(dataDir, 'livefeed.db'), { readonly: true });
  return { ctx, reader };
}

/** The entity types of `packet` whose JSON dump `reader` sees stored, and its changes. */
function seen(reader: Store, packet: number): { synced: string[]; changes: number } {
  const synced = reader.sqlite
    .prepare("SELECT entity FROM dumps WHERE packet = ? AND status = 'SYNCED' ORDER BY entity")
    .pluck()
    .all(packet) as string[];
  const changes = reader.sqlite.prepare('SELECT count(*) FROM changes WHERE packet = ?').pluck().get(packet);
  return { synced, changes: changes as number };
}

async function close(ctx: SyncContext & { store: Store }, reader: Store) {
  reader.close();
  await ctx.feed.client.close();
  ctx.store.close();
}

describe('a packet in one transaction (SQLite)', () => {
  it("shows a reader a packet's dumps together, once all of them were verified", async () => {
    const { ctx, reader } = await contextIn('together');
    const duringPacket: { packet: number; entity: string; seen: ReturnType<typeof seen> }[] = [];
    const afterPacket = new Map<number, ReturnType<typeof seen>>();
    ctx.observe.observer = {
      dumpStored: ({ packet, entity }) => duringPacket.push({ packet, entity, seen: seen(reader, packet) }),
      packetVisited: (packet) => afterPacket.set(packet, seen(reader, packet)),
    };
    try {
      const report = await syncOnce(ctx, { from: 70, to: 72 });
      expect(report.problems.map((p) => p.file)).toEqual([`json-dumps/json-dump-71/artist.tar.xz`]);
      expect(duringPacket).toHaveLength(8);
      for (const stored of duringPacket)
        expect(stored.seen, `${stored.packet} ${stored.entity}`).toEqual({ synced: [], changes: 0 });
      expect(Object.fromEntries(afterPacket)).toEqual({
        70: { synced: ENTITIES, changes: 3 },
        71: { synced: ['area', 'label'], changes: 2 },
        72: { synced: ENTITIES, changes: 3 },
      });
      const failed = reader.sqlite
        .prepare('SELECT status FROM dumps WHERE packet = ? AND entity = ?')
        .pluck();
      expect(failed.get(...BAD)).toBe('FAILED');
      expect(ctx.store.sqlite.inTransaction).toBe(false);
    } finally {
      await close(ctx, reader);
    }
  }, 30_000);

  it('keeps what an aborted pass stored of its packet, and leaves no transaction open', async () => {
    const abort = new AbortController();
    const { ctx, reader } = await contextIn('aborted', abort.signal);
    ctx.observe.observer = {
      dumpStored: ({ packet, entity }) => {
        if (packet === 72 && entity === 'artist') abort.abort(new Error('stopped by the test'));
      },
    };
    try {
      await expect(syncOnce(ctx, { from: 70, to: 72 })).rejects.toThrow();
      expect(ctx.store.sqlite.inTransaction).toBe(false);
      expect(seen(reader, 70).synced).toEqual(ENTITIES);
      expect(seen(reader, 72)).toEqual({ synced: ['area', 'artist'], changes: 2 });
    } finally {
      await close(ctx, reader);
    }
  }, 30_000);
});

describe('inTransaction inside an open transaction', () => {
  it('is a savepoint: rolled back alone when its work throws, kept when it returns', async () => {
    const dir = await tempDir('lf-savepoint-');
    const store = openStore(join(dir.dir, 'livefeed.db'));
    const write = store.sqlite.prepare("INSERT INTO meta (key, value) VALUES (?, 'test')");
    const count = store.sqlite.prepare("SELECT count(*) FROM meta WHERE value = 'test'").pluck();
    try {
      store.sqlite.exec('BEGIN IMMEDIATE');
      await inTransaction(store, () => write.run('kept'));
      await expect(
        inTransaction(store, async () => {
          write.run('rolled back');
          throw new Error('bad archive');
        }),
      ).rejects.toThrow('bad archive');
      expect(store.sqlite.inTransaction).toBe(true);
      store.sqlite.exec('COMMIT');
      expect(count.get()).toBe(1);
    } finally {
      store.close();
      await dir.cleanup();
    }
  });
});

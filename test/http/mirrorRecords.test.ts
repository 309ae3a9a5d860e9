import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedClient } from '../../src/feed/client.js';
import { ENTITY_TYPES, type EntityType } from '../../src/feed/entities.js';
import {
  BUNDLED_FEED_ROOT,
  SAMPLE_TOKEN,
  type SampleFeed,
  startSampleFeed,
} from '../../src/samplefeed/server.js';
import type { SyncReport } from '../../src/sync/context.js';
import { createVerifier } from '../../src/sync/verifier.js';
import { syncOnce } from '../../src/sync/worker.js';
import { TEST_PUBLIC_KEY_FILE } from '../support/archives.js';
import { syncContextOn, tempDir, testLogger } from '../support/harness.js';
import { readBundledManifest } from '../support/manifest.js';
import { rawRequest } from '../support/rawHttp.js';
import { AppServers } from '../support/serveApp.js';
import { describeStores, SQLITE_STORES, type TestDatabase } from '../support/stores.js';
import { syncPassOn } from '../support/synced.js';

const manifest = readBundledManifest();
const first = manifest.packets[0]!;
const last = manifest.packets.at(-1)!;
/** The source syncs every entity type but `series` (`--entities`): the SKIPPED types of a downstream. */
const TRACKED = ENTITY_TYPES.filter((e) => e !== 'series');
const dumpMissing = "Can't find specified JSON dump!";
const packetMissing = "Can't find specified replication packet!\n";
type Row = { packet: number; entity: string; status: string; changes: number };
const DUMPS_SQL = 'SELECT packet, entity, status, change_count AS changes FROM dumps ORDER BY packet, entity';

/**
 * A mirror whose source pruned its archives (`--keep-files 2`) and syncs only some entity types:
 * upstream's 404 only where the source's records say upstream has none (FEED.md, Errors: a
 * downstream livefeed settles a dump's 404 as NO_CHANGES once it has seen a later dump), else 410,
 * 503 or 502, which a downstream records FAILED and asks for again (issue 4, issue 11).
 */
describeStores('the mirror for files it does not serve', (stores) => {
  let feed: SampleFeed;
  let data: Awaited<ReturnType<typeof tempDir>>;
  let db: TestDatabase;
  const servers = new AppServers();
  const logger = testLogger();
  let bare: string;

  beforeAll(async () => {
    feed = await startSampleFeed({ root: BUNDLED_FEED_ROOT });
    data = await tempDir();
    db = await stores.create(data.dir);
    const verifier = await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger);
    const source = { feedRoot: feed.feedRoot, dataDir: data.dir, logger, verifier, replicationPackets: true };
    await syncPassOn(db.store, { ...source, entities: TRACKED });
    await db.store.applyRetention(data.dir, { kind: 'packets', count: 2 }, new Date());
    // No token: archives pruned here cannot be fetched from the feed.
    bare = (await servers.startOn(db, { dataDir: data.dir })).origin;
  }, 120_000);
  afterAll(async () => {
    await servers.closeAll();
    await db?.close();
    await feed?.close();
    await data?.cleanup();
  });

  const get = async (path: string) => {
    const res = await rawRequest(bare, `/api/musicbrainz/${path}`);
    return { status: res.status, body: res.body.toString(), retryAfter: res.headers['retry-after'] };
  };
  /** A tracked entity type without a dump in `packet` (the source settled it NO_CHANGES). */
  const absent = (packet: typeof first) => TRACKED.find((e) => !packet.jsonDumps[e])!;

  it("answers 410 for pruned archives and for what the source never synced, upstream's 404 only where its records say so", async () => {
    expect(
      await db.rows(DUMPS_SQL.replace('ORDER', "WHERE status NOT IN ('SYNCED', 'NO_CHANGES') ORDER")),
    ).toEqual([]);
    const pruned = Object.values(first.jsonDumps)[0]!;
    const kept = Object.values(last.jsonDumps)[0]!;
    expect((await get(pruned.file)).status).toBe(410);
    expect((await get(pruned.signature)).status).toBe(200); // signatures stay kept
    expect((await get(`replication-${first.number}-v2.tar.bz2`)).status).toBe(410);
    expect((await get(`replication-${first.number}-v2.tar.bz2.asc`)).status).toBe(200);
    expect((await get(kept.file)).status).toBe(200);
    const none = `json-dumps/json-dump-${first.number}/${absent(first)}.tar.xz`;
    expect(await get(none)).toMatchObject({ status: 404, body: dumpMissing });
    expect(await get(`${none}.asc`)).toMatchObject({ status: 404, body: `Can't find signature for ${none}` });
    // `series` is not synced here, whether upstream has a dump (186103) or not (186100).
    const series = manifest.packets.find((p) => p.jsonDumps.series)!;
    for (const packet of [series.number, first.number]) {
      const skipped = await get(`json-dumps/json-dump-${packet}/series.tar.xz`);
      expect(skipped.status, `${packet}`).toBe(410);
      expect(skipped.body).toMatch(/did not sync it/);
      expect((await get(`json-dumps/json-dump-${packet}/series.tar.xz.asc`)).status).toBe(410);
    }
    // Before the first packet synced here: never synced; after the highest: not made yet, as upstream.
    // The body says where this server's packets start, for a livefeed syncing from it.
    expect(await get(`json-dumps/json-dump-${first.number - 1}/area.tar.xz`)).toMatchObject({
      status: 410,
      body: `json-dumps/json-dump-${first.number - 1}/area.tar.xz is not available here: this server holds packets from ${first.number} on (a livefeed syncing from it: sync --from ${first.number}).\n`,
    });
    expect((await get(`replication-${first.number - 1}-v2.tar.bz2`)).status).toBe(410);
    expect(await get(`json-dumps/json-dump-${last.number + 1}/area.tar.xz`)).toMatchObject({
      status: 404,
      body: dumpMissing,
    });
    expect(await get(`replication-${last.number + 1}-v2.tar.bz2`)).toMatchObject({
      status: 404,
      body: packetMissing,
    });
  });

  it('answers 503 with Retry-After while its sync still asks the feed, 404 for a packet the feed answered 404 for', async () => {
    const entity = absent(last);
    const path = `json-dumps/json-dump-${last.number}/${entity}.tar.xz`;
    const v1 = `replication-${first.number}.tar.bz2`;
    const setDump = (status: string) =>
      db.rows('UPDATE dumps SET status = ? WHERE packet = ? AND entity = ?', status, last.number, entity);
    const setPacket = (status: string, fileName: string | null) =>
      db.rows(
        'UPDATE replication_packets SET status = ?, file_name = ? WHERE packet = ?',
        status,
        fileName,
        first.number,
      );
    try {
      for (const status of ['FAILED', 'PENDING']) {
        await setDump(status);
        expect(await get(path), status).toMatchObject({ status: 503, retryAfter: '60' });
      }
      // A replication packet without a file: MISSING and PENDING are upstream's 404, FAILED is asked again.
      expect((await get(v1)).status).toBe(410);
      for (const [status, code] of [
        ['MISSING', 404],
        ['PENDING', 404],
        ['FAILED', 503],
      ] as const) {
        await setPacket(status, null);
        expect((await get(v1)).status, status).toBe(code);
      }
    } finally {
      await setDump('NO_CHANGES');
      await setPacket('SYNCED', `replication-${first.number}-v2.tar.bz2`);
    }
  });

  describe('a livefeed syncing from it', () => {
    /** A pass of a downstream's report and its dumps afterwards. */
    type Pass = { report: SyncReport; rows: Row[]; changes: number };
    /** `sync --once` of a fresh downstream tracking `entities` from each of `origins` in turn. */
    const downstream = async (entities: readonly EntityType[], ...origins: string[]): Promise<Pass[]> => {
      const dataB = await tempDir();
      const b = await SQLITE_STORES.create(dataB.dir);
      const verifier = await createVerifier(TEST_PUBLIC_KEY_FILE, 'fail', logger);
      const options = { dataDir: dataB.dir, logger, verifier, entities, replicationPackets: true };
      const passes: Pass[] = [];
      try {
        for (const origin of origins) {
          const ctx = await syncContextOn(b.store, { ...options, feedRoot: `${origin}/api/musicbrainz` });
          const report = await syncOnce(ctx).finally(() => ctx.feed.client.close());
          const [{ n }] = (await b.rows('SELECT count(*) AS n FROM changes')) as [{ n: number }];
          passes.push({ report, rows: await b.rows<Row>(DUMPS_SQL), changes: n });
        }
        return passes;
      } finally {
        await b.close();
        await dataB.cleanup();
      }
    };

    it('settles no pruned hour as no changes: those dumps fail, and are fetched once the mirror can reach the feed', async () => {
      const source = await db.rows<Row>(DUMPS_SQL);
      const [{ n: sourceChanges }] = (await db.rows('SELECT count(*) AS n FROM changes')) as [{ n: number }];
      const client = new FeedClient({ feedRoot: feed.feedRoot, token: SAMPLE_TOKEN, retry: { attempts: 2 } });
      try {
        const proxied = (await servers.startOn(db, { dataDir: data.dir, upstream: client })).origin;
        const [cut, full] = (await downstream(TRACKED, bare, proxied)) as [Pass, Pass];
        const key = (r: Row) => `${r.packet}/${r.entity}`;
        const status = new Map(cut.rows.map((r) => [key(r), r.status]));
        const pruned = source.filter((r) => r.status === 'SYNCED' && r.packet < last.number - 1);
        expect(pruned.length).toBeGreaterThan(10);
        // First pass, from the mirror without feed access: each pruned dump FAILED (410), none NO_CHANGES.
        expect(pruned.filter((r) => status.get(key(r)) !== 'FAILED')).toEqual([]);
        const settled = cut.rows.filter((r) => r.status === 'NO_CHANGES').map(key);
        expect(settled).toEqual(source.filter((r) => r.status === 'NO_CHANGES').map(key));
        const gone = cut.report.problems.filter((p) => /HTTP 410/.test(p.reason));
        expect(gone).toHaveLength(pruned.length + manifest.packets.length - 2); // + replication packets
        expect(cut.report.completed).toEqual([last.number - 1, last.number]);
        expect(cut.changes).toBeLessThan(sourceChanges);
        // Second pass, through a mirror that fetches pruned archives: what the source holds.
        expect(full.report.problems).toEqual([]);
        expect(full.rows).toEqual(source);
        expect(full.changes).toBe(sourceChanges);
      } finally {
        await client.close();
      }
    });

    it('records an entity type the source does not sync as failed, never as no changes', async () => {
      const [{ report, rows, changes }] = (await downstream(['series'], bare)) as [Pass];
      expect(rows.filter((r) => r.status !== 'FAILED')).toEqual([]);
      expect(rows).toHaveLength(manifest.packets.length);
      expect(report.completed).toEqual([]);
      expect(changes).toBe(0);
    });
  });
});

import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseKeepFiles } from '../../../src/files/retentionPolicy.js';
import { type SampleFeed, startSampleFeed } from '../../../src/samplefeed/server.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { syncOnce } from '../../../src/sync/worker.js';
import { describeAppStores } from '../../support/appStores.js';
import { FEED, follow, label } from '../../support/changeFeedGql.js';
import { GrowingFeed } from '../../support/growingFeed.js';
import { type GqlResult, gql, syncContextOn } from '../../support/harness.js';
import { readBundledManifest } from '../../support/manifest.js';

/**
 * `--keep-history` seen through GraphQL on both stores (issue 14 Bounded history, issue 17): the
 * bundled feed's real archives synced by each store's writer, then a sync pass with `keepHistory`
 * (the path of `--keep-history`: the worker calls `SyncStore.history.prune`, sync/prune.ts on
 * SQLite, sync/postgres/prune.ts on PostgreSQL) keeps the newest {@link KEEP} packets. A client's
 * old cursor gets HISTORY_PRUNED, `service { historyFrom }` moves to the window's first packet, an
 * entity's history says it is cut while its current state stays, and a new client starts there.
 */

const KEEP = 10;
const { firstPacket, lastPacket, packets } = readBundledManifest();
/** The window's first packet: the newest stored packet (the feed's last) − KEEP + 1. */
const CUTOFF = lastPacket - KEEP + 1;

/** Packets of each MBID's JSON dump lines in the bundled feed, oldest first. */
const versions = new Map<string, number[]>();
for (const packet of packets)
  for (const dump of Object.values(packet.jsonDumps))
    for (const mbid of dump.mbids) versions.set(mbid, [...(versions.get(mbid) ?? []), packet.number]);
const mbidWhere = (test: (held: number[]) => boolean) => [...versions].find(([, held]) => test(held))![0];
/** Versions before the window and a current version in it: its history is cut. */
const CUT = mbidWhere((held) => held.filter((p) => p < CUTOFF).length >= 2 && held.at(-1)! >= CUTOFF);
/** One version, before the window: its current version is kept though older than the cutoff. */
const OLD = mbidWhere((held) => held.length === 1 && held[0]! < CUTOFF);

const ENTITY = `query($m: ID!) { entity(mbid: $m) {
  historyFrom
  latest { packet position data previous { packet } }
  current { __typename mbid name }
  history(first: 500) { totalCount edges { node { packet position } } }
} }`;

interface EntityAnswer {
  historyFrom: number | null;
  latest: { packet: number; position: number; data: unknown; previous: { packet: number } | null };
  current: { __typename: string; mbid: string; name: string | null };
  history: { totalCount: number; edges: { node: { packet: number; position: number } }[] };
}

const feeds = new Map<SyncStore['kind'], { growing: GrowingFeed; feed: SampleFeed; dir: string }>();

/** One sync pass of the whole bundled feed, replication packets on, with `keepHistory` when given. */
async function sync(writer: SyncStore, keepHistory?: string): Promise<void> {
  const { feed, dir } = feeds.get(writer.kind)!;
  const ctx = await syncContextOn(writer, {
    feedRoot: feed.feedRoot,
    dataDir: dir,
    replicationPackets: true,
  });
  if (keepHistory) ctx.policy.keepHistory = parseKeepFiles(keepHistory);
  try {
    const { problems } = await syncOnce(ctx, { from: firstPacket });
    expect(problems).toEqual([]);
  } finally {
    await ctx.feed.client.close();
  }
}

async function build(writer: SyncStore, dir: string): Promise<void> {
  const growing = new GrowingFeed(join(dir, 'feed'));
  await growing.publishUpTo(lastPacket);
  feeds.set(writer.kind, { growing, feed: await startSampleFeed({ root: growing.root }), dir });
  await sync(writer);
}

describeAppStores('changeFeed and history after --keep-history', build, (kind, run) => {
  const app = () => run().app;
  const historyFrom = async () =>
    ((await gql(app(), '{ service { historyFrom } }')).data!.service.historyFrom as number | null) ?? null;
  const entity = async (mbid: string) => {
    const answer: GqlResult = await gql(app(), ENTITY, { m: mbid });
    expect(answer.errors).toBeUndefined();
    return answer.data!.entity as EntityAnswer;
  };
  /** What a client saw before the pruning pass. */
  let before: {
    earlyCursor: string;
    headCursor: string | null;
    historyFrom: number | null;
    cut: EntityAnswer;
    old: EntityAnswer;
  };

  beforeAll(async () => {
    const early = await gql(app(), FEED, { first: 1 });
    expect(early.errors).toBeUndefined();
    before = {
      earlyCursor: early.data!.changeFeed.pageInfo.endCursor,
      headCursor: (await follow(app(), null, {}, 500)).cursor,
      historyFrom: await historyFrom(),
      cut: await entity(CUT),
      old: await entity(OLD),
    };
    await sync(run().db.store, String(KEEP));
  }, 120_000);
  afterAll(async () => {
    await feeds.get(kind)?.feed.close();
  });

  it('a cursor from before the window gets HISTORY_PRUNED with a clear message, never a silent gap', async () => {
    expect(before.historyFrom).toBe(firstPacket);
    const pruned = await gql(app(), FEED, { after: before.earlyCursor });
    expect(pruned.data).toBeNull();
    expect(pruned.errors).toHaveLength(1);
    expect(pruned.errors![0]!.extensions).toMatchObject({ code: 'HISTORY_PRUNED', historyFrom: CUTOFF });
    expect(pruned.errors![0]!.message).toBe(
      `the change stream's history before packet ${CUTOFF} was pruned (--keep-history): events after ` +
        `this position are gone; start again without a cursor (from packet ${CUTOFF}) and reload the ` +
        'entities you follow (entity, entities). See "Change stream" in the README.',
    );
    const since = await gql(app(), FEED, { since: '2000-01-01T00:00:00Z' });
    expect(since.errors?.[0]?.extensions).toMatchObject({ code: 'HISTORY_PRUNED', historyFrom: CUTOFF });
    // No cursor was given: the message names `since`, not a position.
    expect(since.errors![0]!.message).toBe(
      `the change stream's history before packet ${CUTOFF} was pruned (--keep-history): "since" asks for ` +
        `events before it, which are gone; ask with a later "since" (service { historyFrom }) or without it ` +
        `(from packet ${CUTOFF}). See "Change stream" in the README.`,
    );
    // A cursor at the head lies inside the window: it reads on, nothing new.
    expect((await follow(app(), before.headCursor)).seen).toEqual([]);
  });

  it("service { historyFrom } moves to the window's first packet", async () => {
    expect(await historyFrom()).toBe(CUTOFF);
    const stored = await run().db.rows<{ value: string }>(
      "SELECT value FROM meta WHERE key = 'history_from'",
    );
    expect(stored.map((row) => Number(row.value))).toEqual([CUTOFF]);
  });

  it("an entity's history says it is cut; its current state stays as it was", async () => {
    const held = versions.get(CUT)!;
    expect(before.cut.historyFrom).toBeNull();
    expect(before.cut.history.edges.map((e) => e.node.packet)).toEqual(held);
    expect(before.cut.latest.previous).not.toBeNull();

    const cut = await entity(CUT);
    expect(cut.historyFrom).toBe(CUTOFF);
    const kept = held.filter((packet) => packet >= CUTOFF);
    expect(cut.history.totalCount).toBe(kept.length);
    expect(cut.history.edges.map((e) => e.node.packet)).toEqual(kept);
    expect(cut.latest).toEqual({
      ...before.cut.latest,
      previous: kept.length > 1 ? { packet: kept.at(-2) } : null,
    });
    expect(cut.current).toEqual(before.cut.current);

    // The current version is kept though older than the window, and history shows it.
    const old = await entity(OLD);
    expect(old.historyFrom).toBe(CUTOFF);
    expect(old.latest).toEqual(before.old.latest);
    expect(old.current).toEqual(before.old.current);
    expect(old.history).toEqual(before.old.history);
    expect(old.history.edges.map((e) => e.node.packet)).toEqual(versions.get(OLD));
  });

  it("a pruned packet's changes and row changes answer HISTORY_PRUNED, never a page with a gap", async () => {
    const pruned = packets.find(
      (p) => p.number < CUTOFF && p.replication && Object.keys(p.jsonDumps).length > 0,
    )!;
    const entity = Object.keys(pruned.jsonDumps)[0]!.toUpperCase().replace('-', '_');
    const fields = [
      `changes(packet: $p, entity: ${entity}) { totalCount nodes { mbid } }`,
      'rowChanges(packet: $p) { totalCount nodes { table } }',
      'packet(number: $p) { dumps { changes { nodes { mbid } } } }',
      'packet(number: $p) { replication { tables { table } } }',
      'packet(number: $p) { replication { rowChanges { totalCount } } }',
    ];
    const ask = (field: string, packet: number) => gql(app(), `query($p: Int!) { ${field} }`, { p: packet });
    for (const field of fields) {
      const answer = await ask(field, pruned.number);
      expect(
        answer.errors?.map((e) => e.extensions?.code),
        field,
      ).toEqual(expect.arrayContaining(['HISTORY_PRUNED']));
      expect(new Set(answer.errors!.map((e) => e.extensions?.code)), field).toEqual(
        new Set(['HISTORY_PRUNED']),
      );
      expect(answer.errors![0]!.message).toMatch(
        new RegExp(
          `of packet ${pruned.number} were pruned \\(--keep-history\\): this instance holds history from packet ${CUTOFF} on`,
        ),
      );
      expect(answer.errors![0]!.extensions).toMatchObject({ historyFrom: CUTOFF, packet: pruned.number });
    }
    // The window's packets read as before.
    const kept = packets.find((p) => p.number >= CUTOFF && p.replication && p.jsonDumps.area)!;
    for (const field of fields) {
      const answer = await ask(field.replace(`entity: ${entity}`, 'entity: AREA'), kept.number);
      expect(answer.errors, field).toBeUndefined();
    }
  });

  it('a new client without a cursor starts at historyFrom and sees the whole window once', async () => {
    const fresh = await follow(app(), null, {}, 7);
    expect(fresh.seen[0]!.packet).toBe(CUTOFF);
    // The last packet waits for a later packet's JSON dumps: not served yet (changeFeed.test.ts).
    expect(fresh.seen.map(label)).toEqual(feeds.get(kind)!.growing.expectedEvents(CUTOFF, lastPacket - 1));
    expect(fresh.cursor).toBe(before.headCursor);
  });
});

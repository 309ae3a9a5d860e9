import { expect, it } from 'vitest';
import { describeAppStores } from '../../support/appStores.js';
import { artistLine, buildCurrentStateOn, MBID } from '../../support/currentStateFeed.js';
import { gql } from '../../support/harness.js';

// The current state story (test/support/currentStateFeed.ts) stored by each store's sync writer.

const ENTITY = `query($m: ID!) { entity(mbid: $m) { mbid type latest { mbid type packet position name data } } }`;

describeAppStores('entity(mbid) over either store', buildCurrentStateOn, (_kind, run) => {
  it('answers the newest JSON dump line of an MBID asked in upper case, byte for byte', async () => {
    const answer = await gql(run().app, ENTITY, { m: MBID.replaced.toUpperCase() });
    expect(answer).toEqual({
      data: {
        entity: {
          mbid: MBID.replaced,
          type: 'ARTIST',
          latest: {
            mbid: MBID.replaced,
            type: 'ARTIST',
            packet: 11,
            position: 1,
            name: 'second',
            data: JSON.parse(artistLine(MBID.replaced, 'second')),
          },
        },
      },
    });
  });

  it('a deleted MBID keeps its last line; a merge target no JSON dump held and an unknown MBID are null', async () => {
    const deleted = await gql(run().app, ENTITY, { m: MBID.deletedDespiteOlderDump });
    expect(deleted.data!.entity.latest).toMatchObject({ packet: 11, position: 2, name: 'second' });
    for (const m of [MBID.notInDumps, MBID.unknown]) {
      expect(await gql(run().app, ENTITY, { m })).toEqual({ data: { entity: null } });
    }
  });

  it('an MBID that is not one is INVALID_MBID, before any read', async () => {
    const answer = await gql(run().app, ENTITY, { m: 'not-an-mbid' });
    expect(answer.data).toEqual({ entity: null });
    expect(answer.errors![0]!.extensions!.code).toBe('INVALID_MBID');
  });

  it('removals pages through the removals of a range by packet, MBID, kind; removal(mbid) is the newest', async () => {
    const REMOVALS = `query($after: String) { removals(fromPacket: 12, toPacket: 13, first: 3, after: $after) {
      totalCount pageInfo { hasNextPage endCursor } nodes { mbid type packet kind mergedInto timestamp } } }`;
    const seen: { packet: number; kind: string; mbid: string }[] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await gql(run().app, REMOVALS, { after })).data!.removals;
      expect(page.totalCount).toBe(7);
      seen.push(...page.nodes);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen.map((r) => `${r.packet} ${r.kind} ${r.mbid}`)).toEqual([
      `12 DELETED ${MBID.reappeared}`,
      `12 MERGED ${MBID.chainStart}`,
      `12 MERGED ${MBID.mergedThenDeleted}`,
      `12 DELETED ${MBID.deletedDespiteOlderDump}`,
      `13 MERGED ${MBID.middle}`,
      `13 DELETED ${MBID.deletedTarget}`,
      `13 MERGED ${MBID.mergedIntoUnheld}`,
    ]);
    expect(seen[1]).toMatchObject({
      type: 'ARTIST',
      mergedInto: MBID.middle,
      timestamp: expect.stringMatching(/^2026-/),
    });
    const removal = await gql(run().app, `{ removal(mbid: "${MBID.middle}") { packet kind mergedInto } }`);
    expect(removal.data).toEqual({ removal: { packet: 13, kind: 'MERGED', mergedInto: MBID.chainEnd } });
  });

  it('a removals cursor holds only on its own packet and filters; there it goes on, nothing twice', async () => {
    const PAGE = `query($n: Int!, $after: String) { packet(number: $n) { replication {
      removals(first: 2, after: $after) { pageInfo { endCursor } nodes { mbid } } } } }`;
    const first = (await gql(run().app, PAGE, { n: 12 })).data!.packet.replication.removals;
    const after = first.pageInfo.endCursor as string;
    for (const query of [
      `{ packet(number: 13) { replication { removals(after: "${after}") { totalCount } } } }`,
      `{ removals(fromPacket: 12, toPacket: 13, after: "${after}") { totalCount } }`,
      `{ removals(fromPacket: 12, toPacket: 12, entity: LABEL, after: "${after}") { totalCount } }`,
    ]) {
      expect((await gql(run().app, query)).errors?.[0]?.extensions?.code, query).toBe('BAD_CURSOR');
    }
    const next = (await gql(run().app, PAGE, { n: 12, after })).data!.packet.replication.removals;
    expect([...first.nodes, ...next.nodes].map((r: { mbid: string }) => r.mbid)).toEqual([
      MBID.reappeared,
      MBID.chainStart,
      MBID.mergedThenDeleted,
      MBID.deletedDespiteOlderDump,
    ]);
  });

  // Last: it stores removals of its own.
  it('of a deletion and a merge in one packet, removed, redirect and resolve all take the merge', async () => {
    const insert =
      "INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES (?, 'artist', 20, ?, ?)";
    await run().db.rows(insert, MBID.replaced, 'DELETED', null);
    await run().db.rows(insert, MBID.replaced, 'MERGED', MBID.chainEnd);
    const answer = await gql(
      run().app,
      `query($m: ID!) { entity(mbid: $m) { removed { kind packet mergedInto } redirect { mbid latest { packet } } }
        resolve(mbids: [$m]) { status path } }`,
      { m: MBID.replaced },
    );
    expect(answer).toEqual({
      data: {
        entity: {
          removed: { kind: 'MERGED', packet: 20, mergedInto: MBID.chainEnd },
          redirect: { mbid: MBID.chainEnd, latest: { packet: 10 } },
        },
        resolve: [{ status: 'MERGED', path: [MBID.chainEnd] }],
      },
    });
  });
});

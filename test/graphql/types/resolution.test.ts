import { expect, it } from 'vitest';
import { MAX_MBIDS } from '../../../src/graphql/types/resolution.js';
import { describeAppStores } from '../../support/appStores.js';
import { buildCurrentStateOn, MBID } from '../../support/currentStateFeed.js';
import { gql } from '../../support/harness.js';

// The current state story stored by each store's sync writer, served over either store.
describeAppStores(
  'entity, entities and resolve over the current state (yoga.fetch)',
  buildCurrentStateOn,
  (_kind, run) => {
    it('entity(mbid) answers the newest version; history still lists every change', async () => {
      const answer = await gql(
        run().app,
        `query($m: ID!) { entity(mbid: $m) { mbid type latest { packet position name } history { nodes { packet } } removed { kind } } }`,
        { m: MBID.replaced.toUpperCase() },
      );
      expect(answer).toEqual({
        data: {
          entity: {
            mbid: MBID.replaced,
            type: 'ARTIST',
            latest: { packet: 11, position: 1, name: 'second' },
            history: { nodes: [{ packet: 10 }, { packet: 11 }] },
            removed: null,
          },
        },
      });
    });

    it('entity(mbid) of a deleted MBID keeps its last version and says it was removed', async () => {
      const answer = await gql(
        run().app,
        `query($m: ID!) { entity(mbid: $m) { latest { packet name } removed { kind packet } } }`,
        { m: MBID.deletedDespiteOlderDump },
      );
      expect(answer.data!.entity).toEqual({
        latest: { packet: 11, name: 'second' },
        removed: { kind: 'DELETED', packet: 12 },
      });
    });

    it('entities(mbids) answers in the order asked, null where unknown, duplicates repeated', async () => {
      const mbids = [MBID.chainEnd, MBID.unknown, MBID.replaced, MBID.notInDumps, MBID.chainEnd];
      const answer = await gql(
        run().app,
        'query($m: [ID!]!) { entities(mbids: $m) { mbid latest { packet } } }',
        {
          m: mbids,
        },
      );
      expect(answer).toEqual({
        data: {
          entities: [
            { mbid: MBID.chainEnd, latest: { packet: 10 } },
            null,
            { mbid: MBID.replaced, latest: { packet: 11 } },
            null,
            { mbid: MBID.chainEnd, latest: { packet: 10 } },
          ],
        },
      });
      const none = await gql(run().app, '{ entities(mbids: []) { mbid } }');
      expect(none).toEqual({ data: { entities: [] } });
    });

    it('resolve(mbids) gives each status, follows merge chains and names each hop', async () => {
      const mbids = [
        MBID.chainEnd,
        MBID.chainStart,
        MBID.middle,
        MBID.mergedThenDeleted,
        MBID.deletedTarget,
        MBID.mergedIntoUnheld,
        MBID.reappeared,
        MBID.unknown,
      ];
      const answer = await gql(
        run().app,
        'query($m: [ID!]!) { resolve(mbids: $m) { mbid status path target { mbid type latest { packet } } } }',
        { m: mbids },
      );
      expect(answer.errors).toBeUndefined();
      const end = { mbid: MBID.chainEnd, type: 'ARTIST', latest: { packet: 10 } };
      expect(answer.data!.resolve).toEqual([
        { mbid: MBID.chainEnd, status: 'CURRENT', path: [], target: end },
        { mbid: MBID.chainStart, status: 'MERGED', path: [MBID.middle, MBID.chainEnd], target: end },
        { mbid: MBID.middle, status: 'MERGED', path: [MBID.chainEnd], target: end },
        { mbid: MBID.mergedThenDeleted, status: 'DELETED', path: [MBID.deletedTarget], target: null },
        { mbid: MBID.deletedTarget, status: 'DELETED', path: [], target: null },
        {
          mbid: MBID.mergedIntoUnheld,
          status: 'MERGED',
          path: [MBID.notInDumps],
          target: { mbid: MBID.notInDumps, type: 'ARTIST', latest: null },
        },
        {
          mbid: MBID.reappeared,
          status: 'CURRENT',
          path: [],
          target: { mbid: MBID.reappeared, type: 'ARTIST', latest: { packet: 14 } },
        },
        { mbid: MBID.unknown, status: 'UNKNOWN', path: [], target: null },
      ]);
    });

    it('resolve takes MBIDs in either case, answers them in lower case and in the order asked', async () => {
      const answer = await gql(run().app, 'query($m: [ID!]!) { resolve(mbids: $m) { mbid status path } }', {
        m: [MBID.middle.toUpperCase(), MBID.chainEnd, MBID.unknown.toUpperCase()],
      });
      expect(answer).toEqual({
        data: {
          resolve: [
            { mbid: MBID.middle, status: 'MERGED', path: [MBID.chainEnd] },
            { mbid: MBID.chainEnd, status: 'CURRENT', path: [] },
            { mbid: MBID.unknown, status: 'UNKNOWN', path: [] },
          ],
        },
      });
    });

    it("resolve reads a target's line only when asked for it, and then the newest one", async () => {
      const answer = await gql(
        run().app,
        'query($m: [ID!]!) { resolve(mbids: $m) { status target { mbid latest { packet name data } } } }',
        { m: [MBID.replaced, MBID.chainStart] },
      );
      expect(answer.errors).toBeUndefined();
      const [replaced, merged] = answer.data!.resolve;
      expect(replaced).toMatchObject({
        status: 'CURRENT',
        target: { latest: { packet: 11, name: 'second' } },
      });
      expect(replaced.target.latest.data).toMatchObject({ id: MBID.replaced, name: 'second' });
      expect(merged.target).toMatchObject({ mbid: MBID.chainEnd, latest: { packet: 10 } });
      expect(merged.target.latest.data).toMatchObject({ id: MBID.chainEnd });
    });

    it('resolve stops at a merge cycle instead of looping', async () => {
      const a = 'c0000000-0000-4000-8000-00000000000a';
      const b = 'c0000000-0000-4000-8000-00000000000b';
      const insert = `INSERT INTO removals (mbid, entity, packet, kind, merged_into) VALUES (?, 'artist', 20, 'MERGED', ?)`;
      await run().db.rows(insert, a, b);
      await run().db.rows(insert, b, a);
      const answer = await gql(
        run().app,
        'query($m: [ID!]!) { resolve(mbids: $m) { status path target { mbid } } }',
        {
          m: [a],
        },
      );
      expect(answer.data!.resolve).toEqual([{ status: 'MERGED', path: [b, a], target: null }]);
    });

    it.each([
      ['entities', MAX_MBIDS + 1, 'TOO_MANY_MBIDS'],
      ['resolve', MAX_MBIDS + 1, 'TOO_MANY_MBIDS'],
    ])('%s of %i MBIDs fails with %s; 500 are fine', async (field, count, code) => {
      const many = Array.from(
        { length: count },
        (_, i) => `d0000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      );
      const query = `query($m: [ID!]!) { ${field}(mbids: $m) { __typename } }`;
      const over = await gql(run().app, query, { m: many });
      expect(over.errors?.[0]?.extensions).toMatchObject({ code, maxMbids: MAX_MBIDS });
      expect(over.errors?.[0]?.message).toContain(`at most ${MAX_MBIDS}`);
      const atMost = await gql(run().app, query, { m: many.slice(0, MAX_MBIDS) });
      expect(atMost.errors).toBeUndefined();
      expect(atMost.data![field]).toHaveLength(MAX_MBIDS);
    });

    it.each(['entities', 'resolve'])(
      '%s with an invalid MBID fails with INVALID_MBID naming its index',
      async (field) => {
        const answer = await gql(run().app, `query($m: [ID!]!) { ${field}(mbids: $m) { __typename } }`, {
          m: [MBID.replaced, 'not-an-mbid'],
        });
        expect(answer.errors?.[0]?.extensions?.code).toBe('INVALID_MBID');
        expect(answer.errors?.[0]?.message).toMatch(/^mbids\[1\]: not an MBID/);
      },
    );
  },
);

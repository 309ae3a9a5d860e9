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
});

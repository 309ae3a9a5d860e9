import { join } from 'node:path';
import { parse } from 'graphql';
import { beforeAll, expect, it } from 'vitest';
import type { Reads } from '../../../src/db/reads.js';
import { operationCost } from '../../../src/graphql/plugins/cost.js';
import { schema } from '../../../src/graphql/schema.js';
import type { SyncStore } from '../../../src/sync/syncStore.js';
import { describeAppStores } from '../../support/appStores.js';
import { writeJsonDump } from '../../support/archives.js';
import { gql } from '../../support/harness.js';
import { recordStatements } from '../../support/statementCount.js';
import { syntheticMbid } from '../../support/syntheticFeed.js';
import { buildTypedEntities, packetOneLines, sampleLines, TYPED } from '../../support/typedEntityLines.js';

/** Releases of packet 5: the real sample release line with a fresh MBID and links, held or not. */
const RELEASES = 200;
const heldGroup = (n: number) => n % 2 === 0;
const heldArtist = (n: number) => n % 3 === 0;
const releaseMbid = (n: number) => syntheticMbid(5, 'release', n);
const unheld = (kind: string, n: number) => syntheticMbid(5, kind, n);

function releaseLines(): string[] {
  const sample = JSON.parse(sampleLines('release')[0]!) as Record<string, unknown>;
  return Array.from({ length: RELEASES }, (_, n) =>
    JSON.stringify({
      ...sample,
      id: releaseMbid(n),
      'release-group': { id: heldGroup(n) ? TYPED.releaseGroup : unheld('release-group', n), title: 'x' },
      'artist-credit': [
        {
          name: 'credited',
          joinphrase: '',
          artist: { id: heldArtist(n) ? TYPED.edSheeran : unheld('artist', n), name: 'Embedded name' },
        },
      ],
    }),
  );
}

/** The typed entities and packet 5's releases, through either store's sync writer. */
async function build(writer: SyncStore, dir: string): Promise<void> {
  await buildTypedEntities(writer, dir);
  const built = await writeJsonDump(join(dir, 'p5'), { packet: 5, entity: 'release', lines: releaseLines() });
  await writer.ingestDump({ packet: 5, entity: 'release', archivePath: built.path, file: null });
}

// Reads of lists of MBIDs (each one statement on either store), counted over both stores.
let listReads = 0;
const countListReads = (reads: Reads): Reads => ({
  ...reads,
  currentOfMbids: (mbids, options) => {
    listReads++;
    return reads.currentOfMbids(mbids, options);
  },
});

describeAppStores(
  'typed entity links: Entity when held, null otherwise, one read per level (yoga.fetch)',
  build,
  (kind, run) => {
    let statements: string[] = [];
    const app = () => run().app;
    // SQLite: every statement the app's connection runs, to show there is no read per item (a list
    // read is one statement of the newest lines, and one of removals when the removal filter cannot
    // rule them out: db/currentQueries.ts).
    beforeAll(() => {
      if (kind === 'sqlite') statements = recordStatements(run().reader!);
    });
    const reset = () => {
      statements.length = 0;
      listReads = 0;
    };

    const linkReads = () => {
      if (kind === 'sqlite')
        expect(statements.filter((sql) => sql.includes('json_each') && sql.includes('changes')).length).toBe(
          listReads,
        );
      return listReads;
    };

    it('Artist.area and Label.area resolve when held; beginArea is null but its MBID stays', async () => {
      const answer = await gql(
        app(),
        `query($m: [ID!]!) { entities(mbids: $m) { current {
         ... on Artist { areaMbid area { mbid type current { name } } beginAreaMbid beginArea { mbid } }
         ... on Label { areaMbid area { mbid current { name ... on Area { iso31662Codes } } } } } } }`,
        { m: [TYPED.edSheeran, TYPED.abstractLogix] },
      );
      expect(answer.errors).toBeUndefined();
      const lines = Object.values(packetOneLines())
        .flat()
        // biome-ignore lint/suspicious/noExplicitAny: JSON lines are walked field by field
        .map((l) => JSON.parse(l) as Record<string, any>);
      const json = (mbid: string) => lines.find((l) => l.id === mbid)!;
      const [artist, label] = answer.data!.entities.map((e: { current: unknown }) => e.current);
      expect(artist).toEqual({
        areaMbid: TYPED.unitedKingdom,
        area: { mbid: TYPED.unitedKingdom, type: 'AREA', current: { name: json(TYPED.unitedKingdom).name } },
        beginAreaMbid: json(TYPED.edSheeran)['begin-area'].id,
        beginArea: null,
      });
      expect(label).toEqual({
        areaMbid: TYPED.northCarolina,
        area: {
          mbid: TYPED.northCarolina,
          current: { name: 'North Carolina', iso31662Codes: json(TYPED.northCarolina)['iso-3166-2-codes'] },
        },
      });
    });

    it('ArtistCredit keeps the embedded facts and links the artist only when held', async () => {
      const answer = await gql(
        app(),
        `query($m: ID!) { entity(mbid: $m) { current { ... on ReleaseGroup {
         artistCredit { name joinPhrase artistMbid artistName artist { mbid current { name } } } } } } }`,
        { m: TYPED.releaseGroup },
      );
      expect(answer.errors).toBeUndefined();
      expect(answer.data!.entity.current.artistCredit).toEqual([
        {
          name: 'Ed',
          joinPhrase: ' & ',
          artistMbid: TYPED.edSheeran,
          artistName: 'Ed Sheeran',
          artist: { mbid: TYPED.edSheeran, current: { name: 'Ed Sheeran' } },
        },
        {
          name: 'Pink Floyd',
          joinPhrase: '',
          artistMbid: TYPED.pinkFloyd,
          artistName: 'Pink Floyd',
          artist: null,
        },
      ]);
    });

    // 100: the most the cost limit lets through with both lists of links (each counted as the
    // references a line can hold, graphql/plugins/cost.ts LINKED_LIST_SIZE).
    it('100 releases with release group, credited artists and labels: ONE read for all their links', async () => {
      reset();
      const answer = await gql(
        app(),
        `{ changes(packet: 5, entity: RELEASE, first: 100) { nodes { entity { mbid ... on Release {
           releaseGroupMbid releaseGroup { mbid } artistCredit { artistMbid artist { mbid } } labelInfo { label { mbid } } } } } } }`,
      );
      expect(answer.errors).toBeUndefined();
      const nodes = answer.data!.changes.nodes.map((n: { entity: unknown }) => n.entity);
      expect(nodes).toHaveLength(100);
      nodes.forEach((release: Record<string, never>, n: number) => {
        expect(release.mbid).toBe(releaseMbid(n));
        expect(release.releaseGroupMbid).toBe(heldGroup(n) ? TYPED.releaseGroup : unheld('release-group', n));
        expect(release.releaseGroup).toEqual(heldGroup(n) ? { mbid: TYPED.releaseGroup } : null);
        expect(release.artistCredit).toEqual([
          {
            artistMbid: heldArtist(n) ? TYPED.edSheeran : unheld('artist', n),
            artist: heldArtist(n) ? { mbid: TYPED.edSheeran } : null,
          },
        ]);
        // The sample's label (EMI) is not held here.
        expect(release.labelInfo).toEqual([{ label: null }]);
      });
      expect(linkReads()).toBe(1);
      if (kind === 'sqlite') expect(statements.length).toBeLessThan(10);
    });

    it('links of links: one more read per level, not per item', async () => {
      reset();
      const answer = await gql(
        app(),
        `{ changes(packet: 5, entity: RELEASE, first: 200) { nodes { entity { ... on Release {
           releaseGroup { current { ... on ReleaseGroup { artistCredit { artist { mbid } } } } } } } } } }`,
      );
      expect(answer.errors).toBeUndefined();
      const groups = answer.data!.changes.nodes.map(
        (n: { entity: { releaseGroup: { current: { artistCredit: { artist: unknown }[] } } | null } }) =>
          n.entity.releaseGroup?.current.artistCredit.map((c) => c.artist) ?? null,
      );
      expect(groups).toEqual(
        Array.from({ length: RELEASES }, (_, n) => (heldGroup(n) ? [{ mbid: TYPED.edSheeran }, null] : null)),
      );
      expect(linkReads()).toBe(2);
    });

    it('the new lists count in the cost limit; a page of 50 with aliases and tags passes', async () => {
      const cost = (query: string) => operationCost(schema, parse(query));
      const without = cost(
        '{ changes(packet: 5, entity: RELEASE, first: 50) { nodes { entity { name } } } }',
      );
      const withAliases = cost(
        '{ changes(packet: 5, entity: RELEASE, first: 50) { nodes { entity { name aliases { name } } } } }',
      );
      expect(withAliases).toBeGreaterThan(without + 50 * 2);
      const page = await gql(
        app(),
        `{ changes(packet: 5, entity: RELEASE, first: 50) { nodes { entity { mbid name
           aliases { name sortName locale primary } tags { name count }
           ... on Release { media { position format trackCount } artistCredit { name artist { mbid } } } } } } }`,
      );
      expect(page.errors).toBeUndefined();
      expect(page.data!.changes.nodes).toHaveLength(50);
      const tooMuch = await gql(
        app(),
        `{ changes(packet: 5, entity: RELEASE, first: 500) { nodes { entity { ... on Release {
           artistCredit { artist { history(first: 500) { nodes { entity { aliases { name sortName locale } } } } } } } } } } }`,
      );
      expect(tooMuch.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    });
  },
  { wrapReads: countListReads },
);

import type { Reads } from '../db/reads.js';
import type { EntityType } from '../feed/entities.js';

/** What GraphiQL opens when the database holds no changes yet. */
export const FALLBACK_EXAMPLE = `# livefeed: the MusicBrainz live data feed, verified and stored locally.
# No JSON dump with changes is stored yet: this shows the newest complete packet once one is.
query Latest {
  service { demo deployment }
  latestPacket { number timestamp dumps { entity status changeCount } }
}
`;

const graphqlName = (entity: EntityType) => entity.replace('-', '_').toUpperCase();
const alias = (entity: EntityType) => entity.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/**
 * The query GraphiQL opens with, made from the data held: the newest packet with stored changes,
 * the first changes of each of its entity types that has any, and the history of the one entity
 * among them with the most changes. {@link FALLBACK_EXAMPLE} when nothing is stored yet. Reads
 * `reads` (SQLite or PostgreSQL).
 * @throws (rejects with) the store's error
 */
export async function exampleQuery(
  reads: Pick<Reads, 'newestDumpsWithChanges' | 'changesPage' | 'changeCountOfMbid'>,
): Promise<string> {
  const newest = await reads.newestDumpsWithChanges();
  if (!newest) return FALLBACK_EXAMPLE;
  const { packet, entities } = newest;
  const mbids: string[] = [];
  for (const entity of entities) {
    for (const change of await reads.changesPage(packet, entity, 0, 20)) mbids.push(change.mbid);
  }
  let best = { mbid: mbids[0]!, n: 0 };
  for (const mbid of mbids) {
    const n = await reads.changeCountOfMbid(mbid);
    if (n > best.n) best = { mbid, n };
  }
  const changes = entities.map(
    (entity) =>
      `  ${alias(entity)}: changes(packet: ${packet}, entity: ${graphqlName(entity)}, first: 3) {\n` +
      '    totalCount\n    nodes { mbid name position }\n  }',
  );
  const versions = `${best.n} version${best.n === 1 ? '' : 's'} held`;
  return `# livefeed: the MusicBrainz live data feed, verified and stored locally.
# Press the run button: packet ${packet} (the newest with changes), the first changes of each entity
# type that changed in it, and the one of them with the most versions, typed (current) with its
# history (${versions}).
query Example {
  service { demo deployment }
  packet(number: ${packet}) {
    number
    timestamp
    dumps { entity status changeCount }
  }
${changes.join('\n')}
  entity(mbid: "${best.mbid}") {
    type
    latest { packet name }
    current { __typename name disambiguation aliases { name locale } }
    history(first: 5) { totalCount nodes { packet position name } }
  }
}
`;
}

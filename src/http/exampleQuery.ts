import type { Store } from '../db/client.js';
import { changeCountOfMbid, changesPage } from '../db/queries.js';
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
 * among them with the most changes. {@link FALLBACK_EXAMPLE} when nothing is stored yet.
 */
export function exampleQuery(store: Store): string {
  const newest = store.sqlite
    .prepare(
      `SELECT packet, group_concat(entity) AS entities FROM dumps
       WHERE packet = (SELECT max(packet) FROM dumps WHERE status = 'SYNCED' AND change_count > 0)
         AND status = 'SYNCED' AND change_count > 0`,
    )
    .get() as { packet: number | null; entities: string | null };
  if (newest.packet === null || !newest.entities) return FALLBACK_EXAMPLE;
  const packet = newest.packet;
  const entities = newest.entities.split(',').sort() as EntityType[];
  const mbids = entities.flatMap((entity) => changesPage(store, packet, entity, 0, 20).map((c) => c.mbid));
  let best = { mbid: mbids[0]!, n: 0 };
  for (const mbid of mbids) {
    const n = changeCountOfMbid(store, mbid);
    if (n > best.n) best = { mbid, n };
  }
  const changes = entities.map(
    (entity) =>
      `  ${alias(entity)}: changes(packet: ${packet}, entity: ${graphqlName(entity)}, first: 3) {\n` +
      '    totalCount\n    nodes { mbid name position }\n  }',
  );
  return `# livefeed: the MusicBrainz live data feed, verified and stored locally.
# Press the run button: packet ${packet} (the newest with changes), the first changes of each entity
# type that changed in it, and one of them typed (current) with its history across packets.
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

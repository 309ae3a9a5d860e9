import type { EntityType } from '../../../feed/entities.js';
import { builder } from '../../builder.js';
import { EntityRef } from '../entity.js';
import { child, children, flag, integer, type JsonNode, linkedMbid, type TypedEntity, text } from './json.js';
import { linkedEntity } from './links.js';

/**
 * The `MusicBrainzEntity` interface and the small types the entity types share (aliases, tags,
 * life spans, artist credits). Field ← JSON field mapping: docs/ENTITY_TYPES.md.
 */

/** GraphQL object type name of each entity type. */
export const TYPE_NAMES: Record<EntityType, string> = {
  area: 'Area',
  artist: 'Artist',
  event: 'Event',
  instrument: 'Instrument',
  label: 'Label',
  place: 'Place',
  recording: 'Recording',
  release: 'Release',
  'release-group': 'ReleaseGroup',
  series: 'Series',
  work: 'Work',
};

// Upstream names recordings, releases, release groups and works by `title`, the rest by `name`.
const TITLED: ReadonlySet<EntityType> = new Set(['recording', 'release', 'release-group', 'work']);

/** An alias (`aliases[]`). */
export const AliasRef = builder.objectRef<JsonNode>('Alias').implement({
  description: 'An alias of an entity (JSON `aliases[]`).',
  fields: (t) => ({
    name: t.string({ nullable: true, description: 'JSON `name`.', resolve: (a) => text(a, 'name') }),
    sortName: t.string({
      nullable: true,
      description: 'JSON `sort-name`.',
      resolve: (a) => text(a, 'sort-name'),
    }),
    locale: t.string({
      nullable: true,
      description: 'JSON `locale`, e.g. `en_CA`; null for none.',
      resolve: (a) => text(a, 'locale'),
    }),
    primary: t.boolean({
      nullable: true,
      description:
        'JSON `primary`: true for the primary alias of its locale; upstream writes null otherwise.',
      resolve: (a) => flag(a, 'primary'),
    }),
    type: t.string({
      nullable: true,
      description: 'JSON `type`, e.g. `Artist name`, `Search hint`.',
      resolve: (a) => text(a, 'type'),
    }),
  }),
});

/** A tag (`tags[]`). */
export const TagRef = builder.objectRef<JsonNode>('Tag').implement({
  description: 'A folksonomy tag (JSON `tags[]`).',
  fields: (t) => ({
    name: t.string({ nullable: true, description: 'JSON `name`.', resolve: (g) => text(g, 'name') }),
    count: t.int({
      nullable: true,
      description: 'JSON `count`: votes.',
      resolve: (g) => integer(g, 'count'),
    }),
  }),
});

/** A life span (`life-span`). */
export const LifeSpanRef = builder.objectRef<JsonNode>('LifeSpan').implement({
  description:
    'Begin and end (JSON `life-span`); dates as upstream writes them: `YYYY`, `YYYY-MM` or `YYYY-MM-DD`.',
  fields: (t) => ({
    begin: t.string({ nullable: true, description: 'JSON `begin`.', resolve: (l) => text(l, 'begin') }),
    end: t.string({ nullable: true, description: 'JSON `end`.', resolve: (l) => text(l, 'end') }),
    ended: t.boolean({ nullable: true, description: 'JSON `ended`.', resolve: (l) => flag(l, 'ended') }),
  }),
});

/** One credited artist (`artist-credit[]`). */
export const ArtistCreditRef = builder.objectRef<JsonNode>('ArtistCredit').implement({
  description: 'One artist of an artist credit (JSON `artist-credit[]`), in credit order.',
  fields: (t) => ({
    name: t.string({
      nullable: true,
      description: 'JSON `name`: the name as credited here.',
      resolve: (c) => text(c, 'name'),
    }),
    joinPhrase: t.string({
      nullable: true,
      description: 'JSON `joinphrase`: the text after this artist (` feat. `, `&`), often empty.',
      resolve: (c) => text(c, 'joinphrase'),
    }),
    artistMbid: t.id({
      nullable: true,
      description: 'JSON `artist.id`, also when this instance does not hold the artist.',
      resolve: (c) => linkedMbid(c, 'artist'),
    }),
    artistName: t.string({
      nullable: true,
      description: "JSON `artist.name`: the artist's own name, as the line embeds it.",
      resolve: (c) => {
        const artist = child(c, 'artist');
        return artist && text(artist, 'name');
      },
    }),
    artist: t.field({
      type: EntityRef,
      nullable: true,
      description:
        'The artist (JSON `artist.id`) from the current state; null when this instance does not hold it.',
      // Reads another stored line: a list of these counts by the references a line holds (cost.ts).
      extensions: { link: true },
      resolve: (c, _a, ctx) => linkedEntity(ctx, linkedMbid(c, 'artist')),
    }),
  }),
});

/** GraphQL `MusicBrainzEntity`: what every entity type has. */
export const MusicBrainzEntityRef = builder.interfaceRef<TypedEntity>('MusicBrainzEntity').implement({
  description:
    "One version of an entity, typed: the JSON dump line read field by field, each field from the line's " +
    'member of the same name (`sort-name` is `sortName`; README, Typed entities). Fields the line does not ' +
    'hold are null. `EntityChange.data` has the whole line.',
  resolveType: (entity) => TYPE_NAMES[entity.type],
  fields: (t) => ({
    mbid: t.exposeID('mbid', { description: 'JSON `id`, lower case.' }),
    name: t.string({
      nullable: true,
      description: 'JSON `title` for recordings, releases, release groups and works; `name` for the others.',
      resolve: (e) => text(e, TITLED.has(e.type) ? 'title' : 'name'),
    }),
    disambiguation: t.string({
      nullable: true,
      description:
        'JSON `disambiguation`: the comment that tells entities of the same name apart; often empty.',
      resolve: (e) => text(e, 'disambiguation'),
    }),
    aliases: t.field({
      type: [AliasRef],
      nullable: true,
      description: 'JSON `aliases`; null when the line has none (recordings, releases, ... in some dumps).',
      resolve: (e) => children(e, 'aliases'),
    }),
    tags: t.field({
      type: [TagRef],
      nullable: true,
      description: 'JSON `tags`; null when the line has none.',
      resolve: (e) => children(e, 'tags'),
    }),
  }),
});

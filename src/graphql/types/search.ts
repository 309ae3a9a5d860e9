import { entitySlot } from '../../db/keys.js';
import type { SearchFilter, SearchHit } from '../../db/searchQueries.js';
import type { EntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { CONNECTION_FIELDS, type Page, PageInfo, pageArgs, pageInfo, resolvePage } from '../connection.js';
import { decodeSearchCursor, encodeSearchCursor, searchIdentity, searchPhrases } from '../searchSyntax.js';
import { EntityRef, type EntityShape } from './entity.js';
import { EntityTypeEnum } from './entityType.js';

/** The entity of a hit: the index holds only CURRENT entities, so its line is the current version. */
function entityOfHit(hit: SearchHit): EntityShape {
  return { mbid: hit.change.mbid, type: hit.change.entity, latest: hit.change, score: scoreOf(hit) };
}

/** Entity type slots of the `entities` filter, sorted and distinct; null (all) when absent or empty. */
function slotsOf(entities: EntityType[] | null | undefined): number[] | null {
  if (!entities || entities.length === 0) return null;
  return [...new Set(entities.map(entitySlot))].sort((a, b) => a - b);
}

/** `score` of a hit: bm25 negated, so that higher is better. */
const scoreOf = (hit: SearchHit) => -hit.bm25;

const SCORE_DESCRIPTION =
  'Relevance (FTS5 bm25, negated; over PostgreSQL an approximation of it from ts_rank, README, PostgreSQL): ' +
  'higher is better. A word found in the name weighs most, then the sort ' +
  'name, then aliases, then the disambiguation; rarer words weigh more, and a word too common to rank ' +
  '(README, Search) counts 0: a search of only such words scores 0 everywhere (newest first). Compare ' +
  'scores within one search only.';

// Issue 15: "Nodes are `Entity` with a `score`": `search { nodes { score } }` as well as the edge's.
builder.objectField(EntityRef, 'score', (t) =>
  t.float({
    nullable: true,
    description: `When \`search\` returned this entity: ${SCORE_DESCRIPTION} Null when it was reached otherwise.`,
    resolve: (e) => e.score ?? null,
  }),
);

// The edge keeps its page: the cursor is encoded only when a query asks for it.
const SearchEdge = builder.objectRef<{ page: Page<SearchHit>; hit: SearchHit }>('SearchEdge').implement({
  description: 'One search hit.',
  fields: (t) => ({
    cursor: t.string({ description: CONNECTION_FIELDS.cursor, resolve: (e) => e.page.cursorOf(e.hit) }),
    score: t.float({ description: SCORE_DESCRIPTION, resolve: (e) => scoreOf(e.hit) }),
    node: t.field({ type: EntityRef, description: 'The entity found.', resolve: (e) => entityOfHit(e.hit) }),
  }),
});

const SearchConnection = builder.objectRef<Page<SearchHit>>('SearchConnection').implement({
  description: 'A page of search hits, best first (Relay cursor connection).',
  fields: (t) => ({
    edges: t.field({
      type: [SearchEdge],
      description: CONNECTION_FIELDS.edges,
      resolve: (p) => p.items.map((hit) => ({ page: p, hit })),
    }),
    nodes: t.field({
      type: [EntityRef],
      description: CONNECTION_FIELDS.nodes,
      resolve: (p) => p.items.map(entityOfHit),
    }),
    pageInfo: t.field({ type: PageInfo, description: CONNECTION_FIELDS.pageInfo, resolve: pageInfo }),
    totalCount: t.int({
      description: 'Entities the search matches, not just this page.',
      resolve: (p) => p.totalCount(),
    }),
  }),
});

builder.queryField('search', (t) =>
  t.field({
    type: SearchConnection,
    description:
      'Finds entities of the current state by name, sort name, alias (name or sort name) and disambiguation, best ' +
      'first. Case and diacritics do not matter (`grosse boite` finds "Grosse Boîte"); every word must match; the ' +
      'last word matches as a prefix unless the query ends in a space; "double quotes" match a phrase. Deleted and ' +
      'merged entities are not found; a replaced one only by its newest version. See the README, Search.',
    args: {
      query: t.arg.string({
        required: true,
        description: 'Words to find (at most 200 characters, 16 words).',
      }),
      entities: t.arg({
        type: [EntityTypeEnum],
        required: false,
        description: 'Only entities of these types (default, or an empty list: all).',
      }),
      ...pageArgs(t.arg),
    },
    resolve: (_r, args, ctx) => {
      const filter: SearchFilter = {
        phrases: searchPhrases(args.query),
        slots: slotsOf(args.entities as EntityType[] | null | undefined),
      };
      // Hashed once, and only when a cursor is read or written.
      let hashed: string | undefined;
      const identity = () => (hashed ??= searchIdentity(filter));
      return resolvePage({
        args,
        decodeAfter: (cursor) => (cursor ? decodeSearchCursor(identity(), cursor) : undefined),
        fetch: (after, limit) => ctx.reads.search(filter, after, limit),
        totalCount: () => ctx.reads.searchCount(filter),
        cursorOf: (hit) => encodeSearchCursor(identity(), { bm25: hit.bm25, id: hit.change.id }),
      });
    },
  }),
);

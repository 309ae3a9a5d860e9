import type { CurrentRow } from '../../db/currentQueries.js';
import type { ChangeRow } from '../../db/queries.js';
import { type Awaitable, type Reads, thenAwaitable } from '../../db/reads.js';
import type { EntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { checkMbid } from '../validate.js';
import { EntityChangeRef } from './entityChange.js';
import { EntityTypeEnum } from './entityType.js';

/**
 * An entity this instance knows, from its current state (db/currentQueries.ts): a JSON dump line
 * (a full dump or the feed) and/or a replication packet that deleted or merged it away; or only as
 * the target of a merge (`latest` null). `history` (types/history.ts) is read only when asked for, a page at a time.
 */
export interface EntityShape {
  mbid: string;
  type: EntityType;
  /** The newest JSON dump line; null when no JSON dump held this MBID. */
  latest: ChangeRow | null;
  /** Relevance, when `search` found it (`Entity.score`, graphql/types/search.ts). */
  score?: number;
}

/** The {@link EntityShape} of a current state row. */
export function entityOfCurrent(row: CurrentRow): EntityShape {
  return { mbid: row.mbid, type: row.entity, latest: row.latest };
}

/**
 * The entity of `mbid` (lower case) from the current state of either store (`Reads.currentOfMbid`):
 * two index seeks and its newest change, never the whole history; at once on SQLite. `fallbackType`
 * names the type of an MBID known only as a merge target. Undefined when the current state does not
 * hold it and no fallback is given.
 */
export function entityOf(
  reads: Reads,
  mbid: string,
  fallbackType?: EntityType,
): Awaitable<EntityShape | undefined> {
  return thenAwaitable(reads.currentOfMbid(mbid), (row) => {
    if (row) return entityOfCurrent(row);
    return fallbackType ? { mbid, type: fallbackType, latest: null } : undefined;
  });
}

/** GraphQL `Entity`. */
export const EntityRef = builder.objectRef<EntityShape>('Entity').implement({
  description:
    'An entity of the current state: its newest version from a JSON dump (a full dump or the feed), with every ' +
    'change this instance holds, or known only because a replication packet deleted it or merged it away (then ' +
    '`latest` is null and `removed` is set).',
  fields: (t) => ({
    mbid: t.exposeID('mbid', { description: 'The MBID, in lower case.' }),
    type: t.expose('type', { type: EntityTypeEnum, description: 'Its entity type.' }),
    latest: t.field({
      type: EntityChangeRef,
      nullable: true,
      description:
        'The newest version (a JSON dump line), also after a deletion or merge (its last version); null when no ' +
        'JSON dump held this MBID (known only from a removal or as a merge target).',
      resolve: (e) => e.latest,
    }),
  }),
});

builder.queryField('entity', (t) =>
  t.field({
    type: EntityRef,
    nullable: true,
    description:
      'An entity by MBID from the current state: its newest version when a JSON dump held it, or with `removed` ' +
      'set (and `latest` null) when only a replication packet deleted or merged it away; null when this instance ' +
      'knows nothing of it.',
    args: { mbid: t.arg.id({ required: true, description: 'An MBID (a UUID), either case.' }) },
    resolve: (_r, args, ctx) =>
      thenAwaitable(entityOf(ctx.reads, checkMbid(String(args.mbid))), (entity) => entity ?? null),
  }),
);

import type { Store } from '../../db/client.js';
import { type ChangeRow, changesOfMbid } from '../../db/queries.js';
import { removalOfMbid } from '../../db/replicationQueries.js';
import type { EntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { checkMbid } from '../validate.js';
import { EntityChangeRef } from './entityChange.js';
import { EntityTypeEnum } from './entityType.js';

/**
 * An entity this instance knows: from JSON dumps (its changes, oldest first) and/or from a
 * replication packet that deleted or merged it away (then `history` may be empty).
 */
export interface EntityShape {
  mbid: string;
  type: EntityType;
  history: ChangeRow[];
}

/**
 * The entity of `mbid`: its JSON dump history, or, for an MBID no JSON dump held, what a
 * replication packet's deletion or merge tells (type from the removal; FEED.md: JSON dumps never
 * show removed entities). `fallbackType` names the type of an MBID known only as a merge target.
 * Undefined when neither knows it and no fallback is given.
 */
export function entityOf(store: Store, mbid: string, fallbackType?: EntityType): EntityShape | undefined {
  const history = changesOfMbid(store, mbid);
  if (history.length > 0) return { mbid, type: history[0]!.entity, history };
  const type = removalOfMbid(store, mbid)?.entity ?? fallbackType;
  return type ? { mbid, type, history } : undefined;
}

/** GraphQL `Entity`. */
export const EntityRef = builder.objectRef<EntityShape>('Entity').implement({
  description:
    'An entity seen in the JSON dumps, with every change of it that this instance holds, or known only ' +
    'because a replication packet deleted it or merged it away (then `latest` is null and `removed` is set).',
  fields: (t) => ({
    mbid: t.exposeID('mbid'),
    type: t.field({ type: EntityTypeEnum, resolve: (e) => e.type }),
    latest: t.field({
      type: EntityChangeRef,
      nullable: true,
      description: 'The newest change; null when no JSON dump held this MBID (known only from a removal).',
      resolve: (e) => e.history.at(-1) ?? null,
    }),
    history: t.field({
      type: [EntityChangeRef],
      description: 'Every change, oldest first; empty when no JSON dump held this MBID.',
      resolve: (e) => e.history,
    }),
  }),
});

builder.queryField('entity', (t) =>
  t.field({
    type: EntityRef,
    nullable: true,
    description:
      'An entity by MBID: with its changes when a JSON dump held it, or with `removed` set (and `latest` null) ' +
      'when only a replication packet deleted or merged it away; null when this instance knows nothing of it.',
    args: { mbid: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => entityOf(ctx.store, checkMbid(String(args.mbid))) ?? null,
  }),
);

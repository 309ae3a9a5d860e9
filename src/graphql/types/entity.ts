import { type ChangeRow, changesOfMbid } from '../../db/queries.js';
import { builder } from '../builder.js';
import { checkMbid } from '../validate.js';
import { EntityChangeRef } from './entityChange.js';
import { EntityTypeEnum } from './entityType.js';

/** An entity known from JSON dumps: its changes, oldest first (never empty). */
interface EntityShape {
  mbid: string;
  history: ChangeRow[];
}

/** GraphQL `Entity`. */
export const EntityRef = builder.objectRef<EntityShape>('Entity').implement({
  description: 'An entity seen in the JSON dumps, with every change of it that this instance holds.',
  fields: (t) => ({
    mbid: t.exposeID('mbid'),
    type: t.field({ type: EntityTypeEnum, resolve: (e) => e.history[0]!.entity }),
    latest: t.field({
      type: EntityChangeRef,
      description: 'The newest change.',
      resolve: (e) => e.history.at(-1)!,
    }),
    history: t.field({
      type: [EntityChangeRef],
      description: 'Every change, oldest first.',
      resolve: (e) => e.history,
    }),
  }),
});

builder.queryField('entity', (t) =>
  t.field({
    type: EntityRef,
    nullable: true,
    description:
      'An entity by MBID; null when no JSON dump held it (also for an MBID known only from replication ' +
      'packets: `removal(mbid)` tells whether it was deleted or merged away).',
    args: { mbid: t.arg.id({ required: true }) },
    resolve: (_r, args, ctx) => {
      const mbid = checkMbid(String(args.mbid));
      const history = changesOfMbid(ctx.store, mbid);
      return history.length > 0 ? { mbid, history } : null;
    },
  }),
);

import { historyFrom, prunedBefore } from '../../db/historyQueries.js';
import { builder } from '../builder.js';
import { EntityRef } from './entity.js';
import { ServiceRef } from './service.js';

builder.objectField(ServiceRef, 'historyFrom', (t) =>
  t.int({
    nullable: true,
    description:
      'The oldest packet whose changes (JSON dump lines, replication row changes) are still held: history before it ' +
      "was pruned (--keep-history), except each entity's current version; null for an empty database.",
    resolve: (_s, _a, ctx) => historyFrom(ctx.store) ?? null,
  }),
);

builder.objectField(EntityRef, 'historyFrom', (t) =>
  t.int({
    nullable: true,
    description:
      '`history` is cut: changes of packets before this one were pruned (--keep-history), so `history` starts at ' +
      'this packet (plus the current version, which is always kept, even when older); null when nothing was pruned.',
    resolve: (_e, _a, ctx) => prunedBefore(ctx.store) ?? null,
  }),
);

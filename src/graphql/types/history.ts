import type { GraphQLResolveInfo } from 'graphql';
import type { ChangeRow } from '../../db/queries.js';
import { type Awaitable, type Reads, thenAwaitable } from '../../db/reads.js';
import { builder } from '../builder.js';
import { decodeCursor, encodeCursor, type Page, pageArgs, resolvePage } from '../connection.js';
import { selectsChangeLines } from './changeFeedLines.js';
import { EntityRef, type EntityShape } from './entity.js';
import { EntityChangeConnection } from './entityChange.js';
import { ServiceRef } from './service.js';

/**
 * One page of an entity's changes, oldest first; the cursor is the change id, scoped to the MBID
 * (`history/<mbid>`), so a cursor of another entity's history is BAD_CURSOR. An MBID no JSON dump
 * held has an empty history. `info`: the field's, to read the page without its lines when it shows
 * none (changeFeedLines.ts).
 * @throws GraphQLError PAGE_SIZE_EXCEEDED, BAD_USER_INPUT, BAD_CURSOR
 */
export function resolveHistory(
  reads: Reads,
  entity: EntityShape,
  args: { first?: number | null; after?: string | null },
  info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>,
): Awaitable<Page<ChangeRow>> {
  const kind = `history/${entity.mbid}`;
  const lines = selectsChangeLines(info.fieldNodes, info.fragments);
  return resolvePage({
    args,
    decodeAfter: (cursor) => decodeCursor(kind, cursor),
    fetch: (after, limit) =>
      entity.latest ? reads.changesOfMbidPage(entity.mbid, after ?? 0, limit, lines) : [],
    totalCount: () => (entity.latest ? reads.changeCountOfMbid(entity.mbid) : 0),
    cursorOf: (c) => encodeCursor(kind, c.id),
  });
}

builder.objectField(EntityRef, 'history', (t) =>
  t.field({
    type: EntityChangeConnection,
    description:
      'Every change held, oldest first, a page at a time (default 20, at most 500); empty when no JSON dump ' +
      'held this MBID.',
    args: pageArgs(t.arg),
    resolve: (e, args, ctx, info) => resolveHistory(ctx.reads, e, args, info),
  }),
);

builder.objectField(ServiceRef, 'historyFrom', (t) =>
  t.int({
    nullable: true,
    description:
      'The oldest packet whose changes (JSON dump lines, replication row changes) are still held: history before it ' +
      "was pruned (--keep-history), except each entity's current version; null for an empty database.",
    resolve: (_s, _a, ctx) => thenAwaitable(ctx.reads.historyFrom(), (packet) => packet ?? null),
  }),
);

builder.objectField(EntityRef, 'historyFrom', (t) =>
  t.int({
    nullable: true,
    description:
      'Where `history` may be cut, the same packet for every entity: changes of packets before this one were ' +
      'pruned (--keep-history), except the current version, which is always kept. `history` is complete from ' +
      'this packet on and may start earlier with that one version; null when nothing was pruned.',
    resolve: (_e, _a, ctx) => thenAwaitable(ctx.reads.prunedBefore(), (packet) => packet ?? null),
  }),
);

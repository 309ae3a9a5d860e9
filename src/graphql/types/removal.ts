import { MAX_PACKET } from '../../db/keys.js';
import { type Awaitable, type Reads, thenAwaitable } from '../../db/reads.js';
import type { RemovalKey, RemovalRange, RemovalRow } from '../../db/replicationQueries.js';
import type { EntityType } from '../../feed/entities.js';
import { isMbid } from '../../feed/mbid.js';
import { builder } from '../builder.js';
import { badCursor, connectionType, type Page, pageArgs, resolvePage } from '../connection.js';
import { userError } from '../errors.js';
import { checkMbid, checkPacketNumber } from '../validate.js';
import { EntityRef, entityOf } from './entity.js';
import { EntityTypeEnum } from './entityType.js';

/** GraphQL `RemovalKind`. */
export const RemovalKindEnum = builder.enumType('RemovalKind', {
  description: 'How an entity left the database.',
  values: {
    DELETED: { description: 'The entity row was deleted (`op = d` on musicbrainz.<entity>).' },
    MERGED: {
      description: 'The entity was merged into another (insert into musicbrainz.<entity>_gid_redirect).',
    },
  } as const,
});

/** GraphQL `EntityRemoval`: an MBID that a replication packet deleted or merged away. */
export const EntityRemovalRef = builder.objectRef<RemovalRow>('EntityRemoval').implement({
  description:
    'An entity deleted or merged away, as a replication packet shows it (JSON dumps never show removals).',
  fields: (t) => ({
    mbid: t.exposeID('mbid', { description: 'The MBID that is gone.' }),
    type: t.field({
      type: EntityTypeEnum,
      description: 'Its entity type (the same field as `EntityChange.type`).',
      resolve: (r) => r.entity,
    }),
    entity: t.field({
      type: EntityTypeEnum,
      deprecationReason:
        'Use `type`: in a `FeedEvent` selection `entity` would clash with `EntityChange.entity` (the typed entity).',
      resolve: (r) => r.entity,
    }),
    packet: t.exposeInt('packet', { description: 'The packet whose replication packet removed it.' }),
    kind: t.expose('kind', { type: RemovalKindEnum, description: 'Deleted, or merged into another entity.' }),
    mergedInto: t.exposeID('mergedInto', {
      nullable: true,
      description:
        'For MERGED: the MBID it was merged into, when a stored replication packet shows the target row; else null.',
    }),
    timestamp: t.field({
      type: 'DateTime',
      nullable: true,
      description: "The replication packet's TIMESTAMP.",
      resolve: (r) => r.timestamp,
    }),
  }),
});

/** GraphQL `EntityRemovalConnection`. */
export const EntityRemovalConnection = connectionType('EntityRemoval', EntityRemovalRef);

/**
 * The filter of a `removals` query: packets `fromPacket`..`toPacket` (each bound optional: from
 * the first, to the newest), optionally of one entity type.
 * @throws GraphQLError INVALID_PACKET, BAD_USER_INPUT (fromPacket after toPacket)
 */
export function removalRange(args: {
  fromPacket?: number | null;
  toPacket?: number | null;
  entity?: EntityType | null;
}): RemovalRange {
  const given = (value: number | null | undefined, fallback: number, argument: string) =>
    value === null || value === undefined ? fallback : checkPacketNumber(value, argument);
  const from = given(args.fromPacket, 1, 'fromPacket');
  const to = given(args.toPacket, MAX_PACKET, 'toPacket');
  if (from > to)
    throw userError('BAD_USER_INPUT', `fromPacket ${from} is after toPacket ${to}`, {
      argument: 'fromPacket',
    });
  return { from, to, entity: args.entity ?? undefined };
}

/**
 * The cursor kind of a removal range: a cursor is valid only within the range (packets and entity
 * type) it was made in, so a cursor of one packet's removals, or of other filters, is refused.
 * `Query.removals` and `ReplicationPacket.removals` over the same range list the same rows, and
 * share the kind as `changes` and `JsonDump.changes` do.
 */
function removalCursorKind(range: RemovalRange): string {
  return `removal/${range.from}/${range.to}/${range.entity ?? '*'}`;
}

function removalCursor(kind: string, row: RemovalRow): string {
  return Buffer.from(`${kind}:${row.packet}:${row.mbid}:${row.kind}`).toString('base64url');
}

function decodeRemovalCursor(kind: string, cursor: string | null | undefined): RemovalKey | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const prefix = `${kind}:`;
  const match = text.startsWith(prefix)
    ? /^(\d+):([^:]+):(DELETED|MERGED)$/.exec(text.slice(prefix.length))
    : null;
  if (!match || !isMbid(match[2]!) || !Number.isSafeInteger(Number(match[1]))) throw badCursor(cursor);
  return { packet: Number(match[1]), mbid: match[2]!, kind: match[3]! };
}

/**
 * One page of the removals in `range`, ordered by packet, MBID, kind; the cursor is that key, so
 * a page costs the same however many removals are stored, scoped to `range` (BAD_CURSOR elsewhere).
 * @throws GraphQLError PAGE_SIZE_EXCEEDED, BAD_USER_INPUT, BAD_CURSOR
 */
export function resolveRemovals(
  reads: Reads,
  range: RemovalRange,
  args: { first?: number | null; after?: string | null },
): Awaitable<Page<RemovalRow>> {
  const kind = removalCursorKind(range);
  return resolvePage({
    args,
    decodeAfter: (cursor) => decodeRemovalCursor(kind, cursor),
    fetch: (after, limit) => reads.removalsPage(range, after, limit),
    totalCount: () => reads.removalCount(range),
    cursorOf: (row) => removalCursor(kind, row),
  });
}

builder.queryFields((t) => ({
  removals: t.field({
    type: EntityRemovalConnection,
    description:
      'Entities deleted or merged away in packets fromPacket..toPacket (default: every stored packet), optionally ' +
      'of one entity type, ordered by packet, then MBID; a page at a time (default 20, at most 500).',
    args: {
      fromPacket: t.arg.int({
        required: false,
        description: 'The first packet, inclusive; default the first held.',
      }),
      toPacket: t.arg.int({
        required: false,
        description: 'The last packet, inclusive; default the newest.',
      }),
      entity: t.arg({
        type: EntityTypeEnum,
        required: false,
        description: 'Only removals of this entity type.',
      }),
      ...pageArgs(t.arg),
    },
    resolve: (_root, args, ctx) => resolveRemovals(ctx.reads, removalRange(args), args),
  }),
  removal: t.field({
    type: EntityRemovalRef,
    nullable: true,
    description:
      'The newest removal of an MBID, also for MBIDs no JSON dump held here (`entity` answers those too, with `latest` null).',
    args: { mbid: t.arg.id({ required: true, description: 'An MBID (a UUID), either case.' }) },
    resolve: (_root, args, ctx) => ctx.reads.removalOfMbid(checkMbid(String(args.mbid))),
  }),
}));

builder.objectField(EntityRef, 'removed', (t) =>
  t.field({
    type: EntityRemovalRef,
    nullable: true,
    description: 'Set when a replication packet deleted this entity or merged it away (its newest removal).',
    resolve: (e, _a, ctx) => ctx.reads.removalOfMbid(e.mbid),
  }),
);

builder.objectField(EntityRef, 'redirect', (t) =>
  t.field({
    type: EntityRef,
    nullable: true,
    description:
      'For an entity merged away: the entity it was merged into, when a stored replication packet shows the ' +
      'target (its own `latest` is null when no JSON dump held the target here); else null.',
    resolve: (e, _a, ctx) =>
      thenAwaitable(ctx.reads.removalOfMbid(e.mbid), (removal) => {
        if (removal?.kind !== 'MERGED' || !removal.mergedInto) return null;
        return thenAwaitable(
          entityOf(ctx.reads, removal.mergedInto, removal.entity),
          (entity) => entity ?? null,
        );
      }),
  }),
);

import type { Store } from '../../db/client.js';
import { MAX_PACKET } from '../../db/keys.js';
import {
  highestStoredReplicationPacket,
  type RemovalRow,
  removalCount,
  removalOfMbid,
  removalsInRange,
} from '../../db/replicationQueries.js';
import type { EntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { userError } from '../errors.js';
import { checkMbid, checkPacketNumber } from '../validate.js';
import { EntityRef, entityOf } from './entity.js';
import { EntityTypeEnum } from './entityType.js';

/** Most packets one `removals` query spans: a week of hourly packets. */
export const MAX_REMOVAL_PACKETS = 168;
/** Most removals one `removals` query returns; beyond it RANGE_TOO_LARGE asks for a narrower range. */
export const MAX_REMOVALS = 10_000;

/** GraphQL `RemovalKind`. */
export const RemovalKindEnum = builder.enumType('RemovalKind', {
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
    kind: t.field({ type: RemovalKindEnum, resolve: (r) => r.kind }),
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

/**
 * The packet range of a `removals` query: `toPacket` defaults to `fromPacket` + 167 when only
 * `fromPacket` is given, else to the newest stored replication packet; `fromPacket` defaults to
 * 167 packets before `toPacket`. Undefined when nothing is stored and no bound is given.
 * @throws GraphQLError INVALID_PACKET, BAD_USER_INPUT (from after to), RANGE_TOO_LARGE (over 168 packets)
 */
export function removalRange(
  store: Store,
  args: { fromPacket?: number | null; toPacket?: number | null },
): { from: number; to: number } | undefined {
  const given = (value: number | null | undefined) =>
    value === null || value === undefined ? undefined : checkPacketNumber(value);
  const fromArg = given(args.fromPacket);
  const toArg = given(args.toPacket);
  const to =
    toArg ??
    (fromArg !== undefined
      ? Math.min(fromArg + MAX_REMOVAL_PACKETS - 1, MAX_PACKET)
      : highestStoredReplicationPacket(store));
  if (to === undefined) return undefined;
  const from = fromArg ?? Math.max(1, to - MAX_REMOVAL_PACKETS + 1);
  if (from > to) throw userError('BAD_USER_INPUT', `fromPacket ${from} is after toPacket ${to}`);
  if (to - from + 1 > MAX_REMOVAL_PACKETS) {
    throw userError(
      'RANGE_TOO_LARGE',
      `packets ${from}..${to} are ${to - from + 1} packets; one query spans at most ${MAX_REMOVAL_PACKETS}`,
      { maxPackets: MAX_REMOVAL_PACKETS },
    );
  }
  return { from, to };
}

/**
 * Removals of a range, ordered by packet then MBID.
 * @throws GraphQLError as {@link removalRange}, and RANGE_TOO_LARGE when more than {@link MAX_REMOVALS} match
 */
function resolveRemovals(
  store: Store,
  args: { fromPacket?: number | null; toPacket?: number | null; entity?: EntityType | null },
): RemovalRow[] {
  const range = removalRange(store, args);
  if (!range) return [];
  const query = { ...range, entity: args.entity ?? undefined };
  const count = removalCount(store, query);
  if (count > MAX_REMOVALS) {
    throw userError(
      'RANGE_TOO_LARGE',
      `packets ${range.from}..${range.to} hold ${count} removals; one query returns at most ${MAX_REMOVALS}: ` +
        'ask for fewer packets or one entity type',
      { maxRemovals: MAX_REMOVALS, count },
    );
  }
  return removalsInRange(store, query);
}

builder.queryFields((t) => ({
  removals: t.field({
    type: [EntityRemovalRef],
    description:
      `Entities deleted or merged away in packets fromPacket..toPacket (at most ${MAX_REMOVAL_PACKETS} packets and ` +
      `${MAX_REMOVALS} removals; default the last ${MAX_REMOVAL_PACKETS} packets up to the newest stored ` +
      'replication packet), ordered by packet, then MBID.',
    args: {
      fromPacket: t.arg.int({ required: false }),
      toPacket: t.arg.int({ required: false }),
      entity: t.arg({ type: EntityTypeEnum, required: false }),
    },
    resolve: (_root, args, ctx) => resolveRemovals(ctx.store, args),
  }),
  removal: t.field({
    type: EntityRemovalRef,
    nullable: true,
    description:
      'The newest removal of an MBID, also for MBIDs no JSON dump held here (`entity` answers those too, with `latest` null).',
    args: { mbid: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => removalOfMbid(ctx.store, checkMbid(String(args.mbid))),
  }),
}));

builder.objectField(EntityRef, 'removed', (t) =>
  t.field({
    type: EntityRemovalRef,
    nullable: true,
    description: 'Set when a replication packet deleted this entity or merged it away (its newest removal).',
    resolve: (e, _a, ctx) => removalOfMbid(ctx.store, e.mbid),
  }),
);

builder.objectField(EntityRef, 'redirect', (t) =>
  t.field({
    type: EntityRef,
    nullable: true,
    description:
      'For an entity merged away: the entity it was merged into, when a stored replication packet shows the ' +
      'target (its own `latest` is null when no JSON dump held the target here); else null.',
    resolve: (e, _a, ctx) => {
      const removal = removalOfMbid(ctx.store, e.mbid);
      if (removal?.kind !== 'MERGED' || !removal.mergedInto) return null;
      return entityOf(ctx.store, removal.mergedInto, removal.entity) ?? null;
    },
  }),
);

import type { GraphQLResolveInfo } from 'graphql';
import type { JsonDumpState } from '../../db/dumpState.js';
import type { ChangeRow } from '../../db/queries.js';
import { type Awaitable, type Reads, thenAwaitable } from '../../db/reads.js';
import type { EntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import {
  connectionType,
  decodeCursor,
  encodeCursor,
  type Page,
  pageArgs,
  resolvePage,
} from '../connection.js';
import { userError } from '../errors.js';
import { LINE_COST } from '../plugins/cost.js';
import { RawJson } from '../plugins/rawJson.js';
import { unlessPruned } from '../prunedHistory.js';
import { checkPacketNumber } from '../validate.js';
import { selectsChangeLines } from './changeFeedLines.js';
import { EntityTypeEnum } from './entityType.js';
import { typedEntityOf } from './musicbrainz/json.js';

/** GraphQL `EntityChange`: one line of a JSON dump. */
export const EntityChangeRef = builder.objectRef<ChangeRow>('EntityChange').implement({
  description: 'One changed entity: a line of the JSON dump of its type for one packet.',
  fields: (t) => ({
    mbid: t.exposeID('mbid', {
      description: "The MBID of the changed entity (the line's `id`, in lower case).",
    }),
    type: t.field({ type: EntityTypeEnum, description: 'Its entity type.', resolve: (c) => c.entity }),
    packet: t.exposeInt('packet', {
      description: 'The packet (replication sequence) whose JSON dump held the line.',
    }),
    position: t.exposeInt('position', { description: '1-based line number in the JSON dump.' }),
    name: t.string({
      nullable: true,
      description: 'The line\'s "name" or "title".',
      resolve: (c, _a, ctx) => {
        if (c.name !== undefined) return c.name; // taken out with the line (db/searchQueries.ts)
        const { json } = typedEntityOf(c, ctx);
        const name = json.name ?? json.title;
        return typeof name === 'string' ? name : null;
      },
    }),
    data: t.field({
      type: 'JSON',
      description: 'The line as a JSON object, as upstream wrote it.',
      // A whole line for the cost limit (graphql/plugins/cost.ts).
      extensions: { cost: LINE_COST },
      // The stored text goes out as it is (rawJsonPlugin): no parse and re-stringify per request.
      resolve: (c) => new RawJson(c.data),
    }),
  }),
});

/** GraphQL `EntityChangeConnection`. */
export const EntityChangeConnection = connectionType('EntityChange', EntityChangeRef);

/**
 * Resolves one page of a dump's changes in file order; the cursor is the line position.
 * `changeCount`: the dump's stored count (its `dumps` row), the connection's `totalCount`.
 * `info`: the connection field's, to read the page without its lines when it shows none
 * (changeFeedLines.ts).
 * @throws GraphQLError PAGE_SIZE_EXCEEDED, BAD_USER_INPUT, BAD_CURSOR; HISTORY_PRUNED for a packet
 *   `--keep-history` pruned (prunedHistory.ts)
 */
export function resolveChanges(
  reads: Reads,
  dump: { packet: number; entity: EntityType; changeCount: number },
  args: { first?: number | null; after?: string | null },
  info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>,
): Awaitable<Page<ChangeRow>> {
  const { packet, entity } = dump;
  const lines = selectsChangeLines(info.fieldNodes, info.fragments);
  return unlessPruned(reads, packet, `${entity} changes`, () =>
    resolvePage({
      args,
      decodeAfter: (cursor) => decodeCursor(`change/${packet}/${entity}`, cursor),
      fetch: (after, limit) => reads.changesPage(packet, entity, after ?? 0, limit, lines),
      totalCount: () => dump.changeCount,
      cursorOf: (c) => encodeCursor(`change/${packet}/${entity}`, c.position),
    }),
  );
}

/**
 * The JSON dump of `entity` for `packet` with its change count, when it can be read: stored
 * (SYNCED) or settled without a dump (NO_CHANGES), so an empty page really means "no changes".
 * One read (`Reads.jsonDumpState`).
 * @throws GraphQLError NOT_FOUND when this instance has not synced the packet or the entity type,
 *   or the dump FAILED; PENDING while the dump is not on the feed yet and the packet not settled
 *   (thrown on SQLite, a rejection on PostgreSQL)
 */
export function checkDumpReadable(
  reads: Reads,
  packet: number,
  entity: EntityType,
  tracked: readonly EntityType[],
): Awaitable<{ packet: number; entity: EntityType; changeCount: number }> {
  return thenAwaitable(reads.jsonDumpState(packet, entity), (state) => {
    const label = `the ${entity} JSON dump of packet ${packet}`;
    if (!state) {
      throw userError('NOT_FOUND', `${label} is not here: this instance has not synced packet ${packet}`, {
        packet,
        entity,
        status: null,
      });
    }
    return { packet, entity, changeCount: readableCount(label, state, packet, entity, tracked) };
  });
}

/** The change count of a synced packet's dump in `state` when it can be read; else the error. */
function readableCount(
  label: string,
  row: JsonDumpState,
  packet: number,
  entity: EntityType,
  tracked: readonly EntityType[],
): number {
  const status = row.status ?? (tracked.includes(entity) ? 'PENDING' : 'SKIPPED');
  if (status === 'SYNCED' || status === 'NO_CHANGES') return row.changeCount ?? 0;
  if (status === 'PENDING') {
    throw userError('PENDING', `${label} is PENDING: not on the feed yet; asked again on the next poll`, {
      packet,
      entity,
      status,
    });
  }
  const why =
    status === 'SKIPPED'
      ? `this instance does not sync ${entity} (--entities)`
      : `its status is ${status}${row.error ? `: ${row.error}` : ''}`;
  throw userError('NOT_FOUND', `${label} is not stored: ${why}`, { packet, entity, status });
}

builder.queryField('changes', (t) =>
  t.field({
    type: EntityChangeConnection,
    description:
      'The changes of one JSON dump (packet, entity type), in file order. NOT_FOUND when this instance ' +
      'has not synced the packet (or the entity type), PENDING while the dump is not on the feed yet, ' +
      'HISTORY_PRUNED once --keep-history pruned the packet.',
    args: {
      packet: t.arg.int({ required: true, description: 'The packet (replication sequence).' }),
      entity: t.arg({
        type: EntityTypeEnum,
        required: true,
        description: 'The entity type of the JSON dump.',
      }),
      ...pageArgs(t.arg),
    },
    resolve: (_root, args, ctx, info) =>
      thenAwaitable(
        checkDumpReadable(ctx.reads, checkPacketNumber(args.packet), args.entity, ctx.service.entities),
        (dump) => resolveChanges(ctx.reads, dump, args, info),
      ),
  }),
);

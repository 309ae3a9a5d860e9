import { type ChangeRow, changesPage, dumpsOfPacket } from '../../db/queries.js';
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
import { RawJson } from '../plugins/rawJson.js';
import { checkPacketNumber } from '../validate.js';
import { EntityTypeEnum } from './entityType.js';

/** GraphQL `EntityChange`: one line of a JSON dump. */
export const EntityChangeRef = builder.objectRef<ChangeRow>('EntityChange').implement({
  description: 'One changed entity: a line of the JSON dump of its type for one packet.',
  fields: (t) => ({
    mbid: t.exposeID('mbid'),
    entity: t.field({ type: EntityTypeEnum, resolve: (c) => c.entity }),
    packet: t.exposeInt('packet'),
    position: t.exposeInt('position', { description: '1-based line number in the JSON dump.' }),
    name: t.string({
      nullable: true,
      description: 'The line\'s "name" or "title".',
      resolve: (c) => {
        const data = parseData(c) as { name?: unknown; title?: unknown };
        const name = data.name ?? data.title;
        return typeof name === 'string' ? name : null;
      },
    }),
    data: t.field({
      type: 'JSON',
      description: 'The line as a JSON object, as upstream wrote it.',
      // The stored text goes out as it is (rawJsonPlugin): no parse and re-stringify per request.
      resolve: (c) => new RawJson(c.data),
    }),
  }),
});

const parsed = new WeakMap<ChangeRow, unknown>();

function parseData(change: ChangeRow): unknown {
  let value = parsed.get(change);
  if (value === undefined) {
    value = JSON.parse(change.data.toString('utf8'));
    parsed.set(change, value);
  }
  return value;
}

/** GraphQL `EntityChangeConnection`. */
export const EntityChangeConnection = connectionType('EntityChange', EntityChangeRef);

/** Resolves one page of a dump's changes in file order; the cursor is the line position. */
export function resolveChanges(
  store: Parameters<typeof changesPage>[0],
  packet: number,
  entity: EntityType,
  args: { first?: number | null; after?: string | null },
): Page<ChangeRow> {
  return resolvePage({
    args,
    decodeAfter: (cursor) => decodeCursor('change', cursor),
    fetch: (after, limit) => changesPage(store, packet, entity, after ?? 0, limit),
    totalCount: () => dumpsOfPacket(store, packet).find((d) => d.entity === entity)?.changeCount ?? 0,
    cursorOf: (c) => encodeCursor('change', c.position),
  });
}

builder.queryField('changes', (t) =>
  t.field({
    type: EntityChangeConnection,
    description: 'The changes of one JSON dump (packet, entity type), in file order.',
    args: {
      packet: t.arg.int({ required: true }),
      entity: t.arg({ type: EntityTypeEnum, required: true }),
      ...pageArgs(t.arg),
    },
    resolve: (_root, args, ctx) =>
      resolveChanges(ctx.store, checkPacketNumber(args.packet), args.entity, args),
  }),
);

import type { QuarantineFilter, QuarantineKey, QuarantineRow } from '../../db/operatorQueries.js';
import { isEntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { badCursor, connectionType, pageArgs, resolvePage } from '../connection.js';
import { LINE_COST } from '../plugins/cost.js';
import { checkPacketNumber } from '../validate.js';
import { EntityTypeEnum } from './entityType.js';

/** GraphQL `QuarantinedLine`: a JSON dump line kept aside instead of stored (issue 5, bad input). */
export const QuarantinedLineRef = builder.objectRef<QuarantineRow>('QuarantinedLine').implement({
  description:
    'A line of a JSON dump that is not a JSON object with an MBID "id": kept with the reason, never dropped. ' +
    'The rest of the dump is stored.',
  fields: (t) => ({
    packet: t.exposeInt('packet', { description: 'The packet of the JSON dump the line came from.' }),
    entity: t.expose('entity', { type: EntityTypeEnum, description: 'The entity type of that JSON dump.' }),
    line: t.exposeInt('line', { description: '1-based line number in mbdump/<entity>.' }),
    raw: t.exposeString('raw', {
      description: 'The line exactly as received.',
      // A whole line, counted by the cost limit as a stored line is (graphql/plugins/cost.ts).
      extensions: { cost: LINE_COST },
    }),
    reason: t.exposeString('reason', { description: 'Why it was not stored, e.g. not JSON: ..., no "id".' }),
  }),
});

/** GraphQL `QuarantinedLineConnection`. */
export const QuarantinedLineConnection = connectionType('QuarantinedLine', QuarantinedLineRef);

/**
 * The cursor kind of a quarantine filter: a cursor is valid only under the filter (packet, entity
 * type) it was made under, so a page of one filter never continues from a line of another.
 */
export function quarantineCursorKind(filter: QuarantineFilter): string {
  return `quarantine/${filter.packet ?? '*'}/${filter.entity ?? '*'}`;
}

/** Opaque cursor of a quarantined line, of the connection whose cursor kind is `kind`. */
export function quarantineCursor(kind: string, row: QuarantineKey): string {
  return Buffer.from(`${kind}:${row.packet}:${row.entity}:${row.line}`).toString('base64url');
}

/**
 * The key of a cursor made by {@link quarantineCursor} with the same kind; undefined when absent.
 * @throws GraphQLError BAD_CURSOR for a cursor of another connection or other filters, or garbage
 */
export function decodeQuarantineCursor(
  kind: string,
  cursor: string | null | undefined,
): QuarantineKey | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const prefix = `${kind}:`;
  const match = text.startsWith(prefix) ? /^(\d+):([a-z-]+):(\d+)$/.exec(text.slice(prefix.length)) : null;
  // A key past 2^53 is no packet or line and cannot be compared exactly (the stores read it as bigint).
  const safe = (digits: string | undefined) => Number.isSafeInteger(Number(digits));
  if (!match || !isEntityType(match[2]!) || !safe(match[1]) || !safe(match[3])) {
    throw badCursor(cursor);
  }
  return { packet: Number(match[1]), entity: match[2]!, line: Number(match[3]) };
}

builder.queryField('quarantine', (t) =>
  t.field({
    type: QuarantinedLineConnection,
    description:
      'Quarantined JSON dump lines, by packet, entity type and line; optionally of one packet or entity type.',
    args: {
      packet: t.arg.int({ required: false, description: 'Only lines of this packet.' }),
      entity: t.arg({
        type: EntityTypeEnum,
        required: false,
        description: 'Only lines of this entity type.',
      }),
      ...pageArgs(t.arg),
    },
    resolve: (_root, args, ctx) => {
      const filter: QuarantineFilter = {
        packet:
          args.packet === null || args.packet === undefined ? undefined : checkPacketNumber(args.packet),
        entity: args.entity ?? undefined,
      };
      const kind = quarantineCursorKind(filter);
      return resolvePage({
        args,
        decodeAfter: (cursor) => decodeQuarantineCursor(kind, cursor),
        fetch: (after, limit) => ctx.reads.quarantinePage(filter, after, limit),
        totalCount: () => ctx.reads.quarantineCount(filter),
        cursorOf: (row) => quarantineCursor(kind, row),
      });
    },
  }),
);

import type { FailureRow } from '../../db/operatorQueries.js';
import { isEntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { badCursor, connectionType, pageArgs, resolvePage } from '../connection.js';
import { EntityTypeEnum } from './entityType.js';

/** GraphQL `FileKind`. */
export const FileKindEnum = builder.enumType('FileKind', {
  description: 'The kind of a feed file.',
  values: {
    JSON_DUMP: { description: 'A JSON dump (json-dumps/json-dump-<N>/<entity>.tar.xz).' },
    REPLICATION_PACKET: { description: 'A replication packet (replication-<N>[-v2].tar.bz2).' },
  } as const,
});

/** GraphQL `FileFailure`: a feed file the sync could not store (issue 5: a stuck file is visible). */
export const FileFailureRef = builder.objectRef<FailureRow>('FileFailure').implement({
  description:
    'A feed file whose last attempt failed (retried; follow mode at nextRetryAt), or a replication packet the feed ' +
    'answers 404 for although replication-info lists it: PENDING, or MISSING after an hour with a later packet ' +
    'there; both are asked again (follow mode at nextRetryAt) until it appears.',
  fields: (t) => ({
    packet: t.exposeInt('packet', { description: 'The packet the file belongs to.' }),
    kind: t.field({
      type: FileKindEnum,
      description: 'A JSON dump or a replication packet.',
      resolve: (f) => (f.entity ? 'JSON_DUMP' : 'REPLICATION_PACKET'),
    }),
    status: t.exposeString('status', {
      description:
        'FAILED (retried); PENDING or MISSING: a replication packet the feed answers 404 for although ' +
        'replication-info lists it (asked again until it appears).',
    }),
    entity: t.field({
      type: EntityTypeEnum,
      nullable: true,
      description: 'Set for JSON dumps.',
      resolve: (f) => f.entity,
    }),
    fileName: t.exposeString('fileName', {
      nullable: true,
      description: 'Path under the feed root, when known.',
    }),
    error: t.exposeString('error', { nullable: true, description: 'The last error, naming file and cause.' }),
    attempts: t.exposeInt('attempts', { description: 'Failed attempts so far.' }),
    nextRetryAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When follow mode tries it again (sync --once tries at once).',
      resolve: (f) => f.nextRetryAt,
    }),
    updatedAt: t.field({
      type: 'DateTime',
      description: 'When it last failed.',
      resolve: (f) => f.updatedAt,
    }),
  }),
});

/** GraphQL `FileFailureConnection`. */
export const FileFailureConnection = connectionType('FileFailure', FileFailureRef);

function failureCursor(row: FailureRow): string {
  return Buffer.from(`failure:${row.packet}:${row.entity ?? ''}`).toString('base64url');
}

function decodeFailureCursor(
  cursor: string | null | undefined,
): { packet: number; entity: string } | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  const match = /^failure:(\d+):([a-z-]*)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  // A key past 2^53 is no packet and cannot be compared exactly (the stores read it as bigint).
  if (!match || !Number.isSafeInteger(Number(match[1])) || (match[2] !== '' && !isEntityType(match[2]!))) {
    throw badCursor(cursor);
  }
  return { packet: Number(match[1]), entity: match[2]! };
}

builder.queryField('failures', (t) =>
  t.field({
    type: FileFailureConnection,
    description:
      'Feed files whose last attempt failed, by packet (replication packet first, then JSON dumps).',
    args: pageArgs(t.arg),
    resolve: (_root, args, ctx) => {
      return resolvePage({
        args,
        decodeAfter: decodeFailureCursor,
        fetch: (after, limit) => ctx.reads.failuresPage(after, limit),
        totalCount: () => ctx.reads.failureCount(),
        cursorOf: failureCursor,
      });
    },
  }),
);

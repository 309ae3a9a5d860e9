import type { DumpRow } from '../../db/queries.js';
import type { EntityType } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { pageArgs } from '../connection.js';
import { EntityChangeConnection, resolveChanges } from './entityChange.js';
import { EntityTypeEnum } from './entityType.js';
import { FeedFileRef } from './feedFile.js';

/** GraphQL `DumpStatus`. */
export const DumpStatusEnum = builder.enumType('DumpStatus', {
  description: 'Where a JSON dump stands on this instance.',
  values: {
    SYNCED: { description: 'Stored: every line is a change or quarantined.' },
    NO_CHANGES: {
      description: 'No JSON dump exists: no entity of this type changed that hour (packet settled).',
    },
    PENDING: { description: 'Not on the feed yet; asked again on the next poll until the packet settles.' },
    FAILED: { description: 'Could not be stored (see error); a later sync retries it.' },
    SKIPPED: { description: 'Not synced by this instance (excluded by --entities).' },
  } as const,
});

/** A JSON dump as the API shows it; `row` is absent for entity types never tried. */
export interface JsonDumpShape {
  packet: number;
  entity: EntityType;
  row: DumpRow | undefined;
  tracked: boolean;
}

/** GraphQL `JsonDump`: the JSON dump of one entity type for one packet. */
export const JsonDumpRef = builder.objectRef<JsonDumpShape>('JsonDump').implement({
  description: 'The JSON dump of one entity type for one packet.',
  fields: (t) => ({
    entity: t.expose('entity', { type: EntityTypeEnum, description: 'The entity type of the dump.' }),
    status: t.field({
      type: DumpStatusEnum,
      description:
        'Whether it is stored, settled as having no changes, still awaited, failed or not synced here.',
      resolve: (d) => (d.row?.status as 'SYNCED' | undefined) ?? (d.tracked ? 'PENDING' : 'SKIPPED'),
    }),
    changeCount: t.int({
      description: 'Changes stored from it (its lines less the quarantined ones); 0 unless SYNCED.',
      resolve: (d) => d.row?.changeCount ?? 0,
    }),
    quarantineCount: t.int({
      description: 'Lines kept aside as malformed.',
      resolve: (d) => d.row?.quarantineCount ?? 0,
    }),
    error: t.string({
      nullable: true,
      description:
        'Why the dump FAILED, or why a PENDING one is not settled although a later dump exists (upstream may no longer hold its hour).',
      resolve: (d) => d.row?.error ?? null,
    }),
    attempts: t.int({ description: 'Failed attempts so far.', resolve: (d) => d.row?.attempts ?? 0 }),
    nextRetryAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'For a FAILED dump: when follow mode tries it again (sync --once tries at once).',
      resolve: (d) => (d.row?.status === 'FAILED' ? (d.row.nextRetryAt ?? null) : null),
    }),
    file: t.field({
      type: FeedFileRef,
      nullable: true,
      description:
        'The archive as fetched (checksum, signature, download link); null unless stored from the feed.',
      resolve: (d, _a, ctx) => (d.row?.fileName ? ctx.reads.feedFileByName(d.row.fileName) : null),
    }),
    changes: t.field({
      type: EntityChangeConnection,
      description: 'Its changes in file order (as Query.changes).',
      args: pageArgs(t.arg),
      resolve: (d, args, ctx, info) =>
        resolveChanges(
          ctx.reads,
          { packet: d.packet, entity: d.entity, changeCount: d.row?.changeCount ?? 0 },
          args,
          info,
        ),
    }),
  }),
});

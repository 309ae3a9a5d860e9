import type { BootstrapPosition, BootstrapState } from '../../db/bootstrapQueries.js';
import { thenAwaitable } from '../../db/reads.js';
import { ENTITY_TYPES, type EntityType } from '../../feed/entities.js';
import { builder, type ServiceInfo } from '../builder.js';
import { EntityTypeEnum } from './entityType.js';
import { ServiceRef } from './service.js';

/** How complete the current state of one entity type is. */
export interface EntityTypeCompleteness {
  entity: EntityType;
  tracked: boolean;
  /** Name of the full JSON dump imported for it, or null. */
  fullDump: string | null;
  complete: boolean;
  /** Why it is not complete; null when it is. */
  note: string | null;
}

// FEED.md, Full JSON dumps: a recording on a release is inside that release's line, not in `recording`.
const RECORDING_NOTE =
  'full JSON dumps hold only standalone recordings: a recording on a release is inside its release (media[].tracks[].recording) ' +
  'and is an entity here only once the feed changes it';

/**
 * Completeness per entity type (all eleven, in upstream order) of the bootstrap state `bootstrap`
 * (LedgerReads.bootstrapState): complete when tracked, imported by a finished `livefeed
 * bootstrap`, and not `recording` (see {@link RECORDING_NOTE}).
 */
export function completenessOf(bootstrap: BootstrapState, service: ServiceInfo): EntityTypeCompleteness[] {
  const imported = bootstrap.imported;
  const finished = bootstrap.position !== undefined;
  return ENTITY_TYPES.map((entity) => {
    const tracked = service.entities.includes(entity);
    const fullDump = imported.get(entity)?.dump ?? null;
    const note = !tracked
      ? 'not synced by this instance (--entities)'
      : fullDump === null || !finished
        ? 'no full JSON dump imported (livefeed bootstrap): only entities changed since the sync started'
        : entity === 'recording'
          ? RECORDING_NOTE
          : null;
    return { entity, tracked, fullDump, complete: note === null, note };
  });
}

const CompletenessRef = builder.objectRef<EntityTypeCompleteness>('EntityTypeCompleteness').implement({
  description: 'Whether the current state holds every entity of one type.',
  fields: (t) => ({
    entity: t.expose('entity', { type: EntityTypeEnum, description: 'The entity type.' }),
    tracked: t.exposeBoolean('tracked', { description: 'This instance syncs the type.' }),
    fullDump: t.exposeString('fullDump', {
      nullable: true,
      description: 'The full JSON dump imported for it (livefeed bootstrap), e.g. 20260510-001.',
    }),
    complete: t.exposeBoolean('complete', {
      description: 'Every entity of the type is in the current state (a full dump, kept by the feed since).',
    }),
    note: t.exposeString('note', { nullable: true, description: 'Why it is not complete.' }),
  }),
});

const BootstrapRef = builder.objectRef<BootstrapPosition>('Bootstrap').implement({
  description: 'The first import from the full JSON dumps (livefeed bootstrap).',
  fields: (t) => ({
    dump: t.exposeString('dump', { description: 'Full dump directory name, e.g. 20260510-001.' }),
    packet: t.exposeInt('packet', {
      description: "The dumps' REPLICATION_SEQUENCE; the sync continued at the following packet.",
    }),
    entities: t.expose('entities', {
      type: [EntityTypeEnum],
      description: "The entity types the full dump loaded (the bootstrap command's --entities).",
    }),
    at: t.expose('at', { type: 'DateTime', description: 'When it finished.' }),
  }),
});

builder.objectFields(ServiceRef, (t) => ({
  completeness: t.field({
    type: [CompletenessRef],
    description: 'Per entity type (all eleven): whether the current state is complete, and why not.',
    resolve: (service, _a, ctx) =>
      thenAwaitable(ctx.reads.bootstrapState(), (bootstrap) => completenessOf(bootstrap, service)),
  }),
  completeEntityTypes: t.field({
    type: [EntityTypeEnum],
    description:
      'Entity types whose current state holds every entity (imported from a full JSON dump; never `RECORDING`, ' +
      'see `completeness`).',
    resolve: (service, _a, ctx) =>
      thenAwaitable(ctx.reads.bootstrapState(), (bootstrap) =>
        completenessOf(bootstrap, service)
          .filter((c) => c.complete)
          .map((c) => c.entity),
      ),
  }),
  bootstrap: t.field({
    type: BootstrapRef,
    nullable: true,
    description: 'The finished first import from the full JSON dumps; null when there was none.',
    resolve: (_s, _a, ctx) => thenAwaitable(ctx.reads.bootstrapState(), (b) => b.position ?? null),
  }),
}));

import { thenAwaitable } from '../../db/reads.js';
import type { StoredReplicationPacketRow, TableChangesRow } from '../../db/replicationQueries.js';
import { builder } from '../builder.js';
import { pageArgs } from '../connection.js';
import { unlessPruned } from '../prunedHistory.js';
import { FeedFileRef } from './feedFile.js';
import { PacketRef } from './packet.js';
import { EntityRemovalConnection, resolveRemovals } from './removal.js';
import { RowChangeConnection, RowOperationEnum, resolveRowChanges } from './rowChange.js';

/** Most tables one replication packet names, as the cost limit counts `tables` (about 350 upstream). */
export const MAX_REPLICATED_TABLES = 400;

/** GraphQL `ReplicationFormat` (FEED.md, Replication packet archives: told by the members). */
export const ReplicationFormatEnum = builder.enumType('ReplicationFormat', {
  description: 'The layout of a replication packet: which dbmirror tables it holds.',
  values: {
    V1: { description: 'dbmirror_pending / dbmirror_pendingdata (test deployment, old packets).' },
    V2: {
      description: 'DBMIRROR_VERSION 2: pending_data / pending_keys / pending_ts (production -v2 files).',
    },
  } as const,
});

/** GraphQL `ReplicationStatus`: where a packet's replication packet stands. */
export const ReplicationStatusEnum = builder.enumType('ReplicationStatus', {
  description: 'Where a replication packet stands on this instance.',
  values: {
    SYNCED: { description: 'Stored: see Packet.replication.' },
    PENDING: {
      description:
        'The feed answered 404 although replication-info lists it (it may not be copied yet): asked again with backoff; ' +
        'the packet is not complete.',
    },
    MISSING: {
      description:
        'Still 404 after retries spanning an hour while a later packet exists: reported, the packet completes, and it ' +
        'is still asked for on every poll (with backoff) until it appears.',
    },
    FAILED: { description: 'Could not be stored (see replicationError); a later sync retries it.' },
    NOT_FETCHED: {
      description:
        'Never tried: replication packets are off (--no-replication-packets), the packet is in --skip-packets, ' +
        'or the sync has not reached it.',
    },
  } as const,
});

/** GraphQL `TableChanges`. */
export const TableChangesRef = builder.objectRef<TableChangesRow>('TableChanges').implement({
  description: 'How many rows of one table a replication packet inserts, updates and deletes.',
  fields: (t) => ({
    table: t.exposeString('table', { description: 'schema.table, e.g. musicbrainz.artist.' }),
    inserts: t.exposeInt('inserts', { description: 'Rows inserted.' }),
    updates: t.exposeInt('updates', { description: 'Rows updated.' }),
    deletes: t.exposeInt('deletes', { description: 'Rows deleted.' }),
  }),
});

/** GraphQL `ReplicationPacket`: a stored replication packet. */
export const ReplicationPacketRef = builder
  .objectRef<StoredReplicationPacketRow>('ReplicationPacket')
  .implement({
    description:
      'The replication packet of a packet (replication-<N>-v2.tar.bz2, test deployment replication-<N>.tar.bz2): ' +
      "the hour's row-level database changes.",
    fields: (t) => ({
      format: t.expose('format', {
        type: ReplicationFormatEnum,
        description: 'V2 (production, -v2 files) or V1 (test deployment).',
      }),
      replicationSequence: t.exposeInt('packet', {
        description: 'REPLICATION_SEQUENCE (checked to equal the packet number).',
      }),
      schemaSequence: t.exposeInt('schemaSequence', { description: 'SCHEMA_SEQUENCE.' }),
      timestamp: t.expose('timestamp', { type: 'DateTime', description: 'TIMESTAMP.' }),
      dbmirrorVersion: t.exposeInt('dbmirrorVersion', {
        nullable: true,
        description: 'DBMIRROR_VERSION (2 for V2); null for V1.',
      }),
      rowCount: t.exposeInt('rowCount', { description: 'Row changes in the packet.' }),
      tables: t.field({
        type: [TableChangesRef],
        description:
          'Changes per table, sorted by table name. HISTORY_PRUNED once --keep-history pruned the packet.',
        // For the cost limit (graphql/plugins/cost.ts): upstream replicates a few hundred tables.
        extensions: { maxItems: MAX_REPLICATED_TABLES },
        resolve: (r, _a, ctx) =>
          unlessPruned(ctx.reads, r.packet, 'row changes', () => ctx.reads.tableChangesOf(r.packet)),
      }),
      removals: t.field({
        type: EntityRemovalConnection,
        description:
          'Entities this packet deleted or merged away, by MBID, a page at a time (as Query.removals).',
        args: pageArgs(t.arg),
        resolve: (r, args, ctx) => resolveRemovals(ctx.reads, { from: r.packet, to: r.packet }, args),
      }),
      rowChanges: t.field({
        type: RowChangeConnection,
        description:
          'Its row changes in apply order (as Query.rowChanges). HISTORY_PRUNED once --keep-history pruned the packet.',
        args: {
          table: t.arg.string({ required: false, description: 'schema.table, e.g. musicbrainz.artist.' }),
          op: t.arg({
            type: RowOperationEnum,
            required: false,
            description: 'Only changes of this operation.',
          }),
          ...pageArgs(t.arg),
        },
        resolve: (r, args, ctx) => resolveRowChanges(ctx.reads, r.packet, args),
      }),
      file: t.field({
        type: FeedFileRef,
        nullable: true,
        description: 'The archive as fetched (checksum, signature, download link).',
        resolve: (r, _a, ctx) => (r.fileName ? ctx.reads.feedFileByName(r.fileName) : null),
      }),
    }),
  });

builder.objectFields(PacketRef, (t) => ({
  replication: t.field({
    type: ReplicationPacketRef,
    nullable: true,
    description: 'The stored replication packet; null unless replicationStatus is SYNCED.',
    resolve: (p, _a, ctx) => ctx.reads.storedReplicationPacket(p.number),
  }),
  replicationStatus: t.field({
    type: ReplicationStatusEnum,
    description:
      'Whether its replication packet is stored, awaited, missing upstream, failed or not fetched.',
    resolve: (p, _a, ctx) =>
      thenAwaitable(ctx.reads.replicationPacketRow(p.number), (row) => {
        const status = row?.status;
        return status === 'SYNCED' || status === 'PENDING' || status === 'MISSING' || status === 'FAILED'
          ? status
          : 'NOT_FETCHED';
      }),
  }),
  replicationError: t.string({
    nullable: true,
    description: 'Why the replication packet is PENDING, MISSING or FAILED.',
    resolve: (p, _a, ctx) =>
      thenAwaitable(ctx.reads.replicationPacketRow(p.number), (row) =>
        row && row.status !== 'SYNCED' ? row.error : null,
      ),
  }),
}));

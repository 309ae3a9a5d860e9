import type { PacketRow } from '../../db/queries.js';
import { thenAwaitable } from '../../db/reads.js';
import { ENTITY_TYPES } from '../../feed/entities.js';
import { builder } from '../builder.js';
import { connectionType, decodeCursor, encodeCursor, pageArgs, resolvePage } from '../connection.js';
import { checkPacketNumber } from '../validate.js';
import { JsonDumpRef, type JsonDumpShape } from './jsonDump.js';

/** GraphQL `Packet`: one hour of the feed. */
export const PacketRef = builder.objectRef<PacketRow>('Packet').implement({
  description: 'One hourly packet of the feed: its JSON dumps (and replication packet).',
  fields: (t) => ({
    number: t.exposeInt('number', { description: 'The replication sequence.' }),
    timestamp: t.field({
      type: 'DateTime',
      nullable: true,
      description: "The archives' TIMESTAMP.",
      resolve: (p) => p.timestamp,
    }),
    schemaSequence: t.exposeInt('schemaSequence', {
      nullable: true,
      description: 'Database schema number (SCHEMA_SEQUENCE).',
    }),
    syncedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When every file of the packet was stored or settled (or, later, what still held the change stream at it: see packetSynced); null while incomplete.',
      resolve: (p) => p.syncedAt,
    }),
    dumps: t.field({
      type: [JsonDumpRef],
      description: 'All eleven entity types, in upstream order.',
      // The cost limit's bound for this list (graphql/plugins/cost.ts).
      extensions: { maxItems: ENTITY_TYPES.length },
      resolve: (p, _a, ctx) =>
        thenAwaitable(ctx.reads.dumpsOfPacket(p.number), (dumps) => {
          const rows = new Map(dumps.map((d) => [d.entity, d]));
          return ENTITY_TYPES.map(
            (entity): JsonDumpShape => ({
              packet: p.number,
              entity,
              row: rows.get(entity),
              tracked: ctx.service.entities.includes(entity),
            }),
          );
        }),
    }),
  }),
});

/** GraphQL `PacketConnection`, newest first. */
export const PacketConnection = connectionType('Packet', PacketRef);

builder.queryFields((t) => ({
  latestPacket: t.field({
    type: PacketRef,
    nullable: true,
    description:
      'The newest packet that is settled and fully synced, with every earlier packet since the first also complete.',
    resolve: (_r, _a, ctx) => ctx.reads.latestPacket(),
  }),
  packet: t.field({
    type: PacketRef,
    nullable: true,
    description: 'One packet by its number; null when this instance knows nothing of it.',
    args: { number: t.arg.int({ required: true, description: 'The packet (replication sequence).' }) },
    resolve: (_r, args, ctx) => ctx.reads.packetByNumber(checkPacketNumber(args.number, 'number')),
  }),
  packets: t.field({
    type: PacketConnection,
    description: 'Packets known to this instance, newest first.',
    args: pageArgs(t.arg),
    resolve: (_r, args, ctx) => {
      return resolvePage({
        args,
        decodeAfter: (cursor) => decodeCursor('packet', cursor),
        fetch: (before, limit) => ctx.reads.packetsPage(before, limit),
        totalCount: () => ctx.reads.packetCount(),
        cursorOf: (p) => encodeCursor('packet', p.number),
      });
    },
  }),
}));

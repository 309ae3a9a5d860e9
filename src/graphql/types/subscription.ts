import { packetArrival } from '../../ops/packetArrival.js';
import { builder } from '../builder.js';
import { PacketRef } from './packet.js';

builder.subscriptionField('packetSynced', (t) =>
  t.field({
    type: PacketRef,
    description:
      'Fires each time a packet becomes complete (every tracked file stored or settled), with that packet, and ' +
      'again when a complete packet stops holding the change stream back (its MISSING replication packet stored, ' +
      'a dump settled by --settle-after stored or settled on evidence). ' +
      'Served as server-sent events: request /graphql with `Accept: text/event-stream`.',
    subscribe: (_root, _args, ctx) => ctx.events.subscribe('packetSynced'),
    // Announced by the database the sync writes; a read replica may replay it a moment later.
    resolve: async (packet: number, _args, ctx) => {
      const row = await packetArrival(ctx.reads, packet, { waitMs: ctx.arrivalWaitMs });
      if (!row) throw new Error(`packet ${packet} was announced as synced but is not in the database`);
      return row;
    },
  }),
);

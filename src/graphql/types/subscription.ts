import { thenAwaitable } from '../../db/reads.js';
import { builder } from '../builder.js';
import { PacketRef } from './packet.js';

builder.subscriptionField('packetSynced', (t) =>
  t.field({
    type: PacketRef,
    description:
      'Fires each time a packet becomes complete (every tracked file stored or settled), with that packet. ' +
      'Served as server-sent events: request /graphql with `Accept: text/event-stream`.',
    subscribe: (_root, _args, ctx) => ctx.events.subscribe('packetSynced'),
    resolve: (packet: number, _args, ctx) =>
      thenAwaitable(ctx.reads.packetByNumber(packet), (row) => {
        if (!row) throw new Error(`packet ${packet} was announced as synced but is not in the database`);
        return row;
      }),
  }),
);

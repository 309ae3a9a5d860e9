import type { WebhookState } from '../../db/webhookQueries.js';
import { builder } from '../builder.js';
import { EntityTypeEnum } from './entityType.js';

const time = (description: string, pick: (w: WebhookState) => string | null) => ({
  type: 'DateTime' as const,
  nullable: true as const,
  description,
  resolve: pick,
});

/** GraphQL `Webhook`: one webhook's delivery state, from the `webhooks` table; never its secret. */
export const WebhookRef = builder.objectRef<WebhookState>('Webhook').implement({
  description:
    'A webhook of the webhooks file (--webhooks-file) and how its delivery of the change stream stands ' +
    '(README, Webhooks). Its secret is never shown.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Its name in the webhooks file, else its URL.' }),
    url: t.exposeString('url', { description: 'Where events go, without credentials, query or fragment.' }),
    entities: t.field({
      type: [EntityTypeEnum],
      nullable: true,
      description: 'Entity types sent; null: all.',
      resolve: (w) => w.entities,
    }),
    mbids: t.field({
      type: ['ID'],
      nullable: true,
      description: 'MBIDs sent; null: all.',
      resolve: (w) => w.mbids,
    }),
    position: t.exposeString('cursor', {
      nullable: true,
      description:
        'Change stream position where delivery goes on: after the last event acknowledged (2xx), or past the ' +
        'events its filters left out (the end of a packet: `p<packet>`), or where it started; null: from the ' +
        'start of the history held. The id of the last edge sent, unless delivery moved past events since.',
    }),
    deliveredPacket: t.exposeInt('deliveredPacket', {
      nullable: true,
      description:
        'Newest packet whose matching events it has all been sent (its filters may have matched none there); ' +
        'after older packets were stored behind the webhook, the packet before those it is sent again.',
    }),
    attempts: t.exposeInt('attempts', {
      description: 'Failed attempts since the last 2xx (0 when delivering).',
    }),
    lastError: t.exposeString('lastError', {
      nullable: true,
      description: 'Why the last failed attempt failed (HTTP status, refused connection, timeout).',
    }),
    lastErrorAt: t.field(time('When an attempt last failed.', (w) => w.lastErrorAt)),
    nextRetryAt: t.field(
      time('When a failing webhook is tried again; null when not failing.', (w) => w.nextRetryAt),
    ),
    lastAttemptAt: t.field(time('When a POST was last tried.', (w) => w.lastAttemptAt)),
    lastSuccessAt: t.field(time('When a POST was last answered 2xx.', (w) => w.lastSuccessAt)),
    deliveredEvents: t.field({
      type: 'SafeInt',
      description: 'Events acknowledged over its life.',
      resolve: (w) => w.deliveredEvents,
    }),
    deliveries: t.exposeInt('deliveries', { description: 'POSTs answered 2xx over its life.' }),
    failedDeliveries: t.exposeInt('failedDeliveries', { description: 'POSTs that failed over its life.' }),
    addedAt: t.expose('addedAt', {
      type: 'DateTime',
      description: 'When the webhooks file first listed it.',
    }),
    retiredAt: t.field(
      time(
        'Set when a sync ran with a webhooks file that no longer lists it (its position is kept).',
        (w) => w.retiredAt,
      ),
    ),
  }),
});

builder.queryField('webhooks', (t) =>
  t.field({
    type: [WebhookRef],
    description:
      'Every webhook this database has delivered to, by name, with attempts, last error and next retry.',
    resolve: (_root, _args, ctx) => ctx.reads.webhookStates(),
  }),
);

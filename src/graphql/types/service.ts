import { builder, type ServiceInfo } from '../builder.js';

/** GraphQL `Service`: what this instance is. */
export const ServiceRef = builder.objectRef<ServiceInfo>('Service').implement({
  description: 'This livefeed instance.',
  fields: (t) => ({
    demo: t.exposeBoolean('demo', {
      description: 'True when serving the bundled sample feed (no upstream token given).',
    }),
    deployment: t.exposeString('deployment', { description: 'production | test.' }),
    feedRoot: t.exposeString('feedRoot', { description: 'The feed root synced from (never with a token).' }),
    version: t.exposeString('version', { description: 'The livefeed version serving this API.' }),
  }),
});

builder.queryField('service', (t) =>
  t.field({
    type: ServiceRef,
    description:
      'This instance: version, deployment, demo, the entity types it syncs, how much history it holds.',
    resolve: (_r, _a, ctx) => ctx.service,
  }),
);

import { builder } from './builder.js';
import './types/scalars.js';
import './types/entityType.js';
import './types/feedFile.js';
import './types/entityChange.js';
import './types/jsonDump.js';
import './types/packet.js';
import './types/entity.js';
import './types/rowChange.js';
import './types/removal.js';
import './types/changeVersions.js';
import './types/changeFeed.js';
import './types/resolution.js';
import './types/replication.js';
import './types/service.js';
import './types/completeness.js';
import './types/history.js';
import './types/subscription.js';
import './types/quarantine.js';
import './types/failures.js';
import './types/webhook.js';
import './types/musicbrainz/index.js';
import './types/search.js';

builder.queryType({
  description: 'Reads of the verified local copy of the live data feed (README, GraphQL).',
});
builder.subscriptionType({ description: 'Live updates, as server-sent events.' });

/** The executable GraphQL schema of livefeed. */
export const schema = builder.toSchema({ sortSchema: false });

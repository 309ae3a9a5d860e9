import { builder } from './builder.js';
import './scalars.js';
import './entityType.js';
import './feedFile.js';
import './entityChange.js';
import './jsonDump.js';
import './packet.js';
import './entity.js';
import './rowChange.js';
import './removal.js';
import './replication.js';
import './service.js';
import './subscription.js';
import './quarantine.js';
import './failures.js';

builder.queryType({});
builder.subscriptionType({ description: 'Live updates, as server-sent events.' });

/** The executable GraphQL schema of livefeed. */
export const schema = builder.toSchema({ sortSchema: false });

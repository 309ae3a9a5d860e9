import { builder } from './builder.js';
import './scalars.js';
import './entityType.js';
import './feedFile.js';
import './entityChange.js';
import './jsonDump.js';
import './packet.js';
import './entity.js';
import './service.js';

builder.queryType({});

/** The executable GraphQL schema of livefeed. */
export const schema = builder.toSchema({ sortSchema: false });

import { join } from 'node:path';
import { z } from 'zod';
import {
  databaseText,
  readDatabasePassword,
  redactDatabaseUrl,
  redactReplicaList,
  replicaList,
} from './databaseUrl.js';
import { ALL, type OptionRow, row, SERVING } from './row.js';

/**
 * The database rows of the option table (src/config/options.ts), in `--help` order: the database,
 * its password file, and its read replicas (issue 17). Every value that may hold a password is
 * redacted in messages (config/databaseUrl.ts).
 */
export const DATABASE_OPTIONS = {
  db: row({
    flag: '--db <file|url>',
    env: 'LIVEFEED_DB',
    fallback: (raw) => join(String(raw.dataDir), 'livefeed.db'),
    shown: '<data-dir>/livefeed.db',
    help: 'SQLite database file, or a postgres:// URL (README, PostgreSQL)',
    commands: ALL,
    redact: redactDatabaseUrl,
    schema: databaseText,
  }),
  dbPassword: row({
    env: 'LIVEFEED_DB_PASSWORD_FILE',
    read: readDatabasePassword,
    shown: "(none: the URL's, if any)",
    help: 'file holding the password of a postgres:// --db and of its --db-replica URLs (a trailing newline is trimmed); never a flag',
    commands: ALL,
    secret: true,
    schema: z.string().optional(),
  }),
  dbReplicas: row({
    flag: '--db-replica <url>',
    env: 'LIVEFEED_DB_REPLICA',
    fallback: '',
    shown: '(none: reads go to --db)',
    help: 'postgres:// URL of a streaming replica of a postgres:// --db that answers the GraphQL reads; repeat the flag for more (env: URLs separated by spaces); writes stay on --db (README, Read replicas)',
    commands: SERVING,
    repeatable: true,
    redact: redactReplicaList,
    schema: replicaList,
  }),
} satisfies Record<string, OptionRow>;

/**
 * livefeed's configuration: one table of options (src/config/options.ts) from which the commands'
 * flags, environment reading, validation and `--help` all come. Only the CLI (src/cli/) loads it;
 * rooms below take values, and import from here only `ConfigError`. `databaseUrl.ts` reads a
 * `--db` value: a SQLite file or a PostgreSQL URL, whose password is never shown.
 */

export {
  databaseSecrets,
  isPostgresUrl,
  postgresConnectionString,
  redactDatabaseUrl,
  replicaConnections,
} from './config/databaseUrl.js';
export {
  type Config,
  type EnvHelp,
  envOnlyOf,
  type FlagHelp,
  type Flags,
  flagsOf,
  loadConfig,
  loadSampleFeedConfig,
  prepareConfig,
  type SampleFeedConfig,
} from './config/load.js';
export { ConfigError, parseByteSize } from './config/parsers.js';
export type { CommandName } from './config/row.js';

/**
 * Packets once broken upstream and since republished fixed (FEED.md, Replication packet archives):
 * fetched like any other; no longer skipped by default (issue 11). Kept as a name for tests and docs.
 */
export const REPUBLISHED_PACKETS: readonly number[] = [
  104949, 162718, 162719, 162720, 162721, 162722, 162723, 162724,
];

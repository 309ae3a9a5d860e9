import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, ConfigError, type Flags } from '../config.js';
import { DEFAULT_FEED_ROOTS } from '../feed/protocol/urls.js';

/** The commands that open a database. */
export type DatabaseCommand = 'sync' | 'serve' | 'start' | 'status' | 'import';

/** Which database a command works on, decided once for every command. */
export interface DatabaseChoice {
  /** The SQLite file. */
  path: string;
  /** True when the command works on the demo (the bundled sample feed's data). */
  demo: boolean;
}

/** True when neither a token nor a feed root of one's own is configured: `start` runs the demo. */
export function noFeedConfigured(config: Config): boolean {
  return !config.token && config.feedUrl === DEFAULT_FEED_ROOTS[config.deployment];
}

/**
 * Decides the database of `command`: `--db` or `LIVEFEED_DB` when given; otherwise
 * `<data-dir>/demo.db` for the demo and `<data-dir>/livefeed.db` for everything else. The demo is
 * chosen only by `--demo`, or by `start` falling back to it without a token and feed root.
 * @param config the loaded configuration (its `db` holds the flag, env or default value)
 * @param flags commander options of the command (`demo`, `db`)
 * @param env usually process.env (`LIVEFEED_DB`)
 */
export function chooseDatabase(
  command: DatabaseCommand,
  config: Config,
  flags: Flags,
  env: NodeJS.ProcessEnv = process.env,
): DatabaseChoice {
  const demo = !!flags.demo || (command === 'start' && noFeedConfigured(config));
  const explicit = flags.db !== undefined || (env.LIVEFEED_DB !== undefined && env.LIVEFEED_DB !== '');
  return { path: demo && !explicit ? join(config.dataDir, 'demo.db') : config.db, demo };
}

/**
 * Refuses to serve a database that does not exist (a typo in `--db` must not serve an empty one).
 * @throws ConfigError (exit 2) saying to run `livefeed sync` first or pass `--demo`
 */
export function requireExistingDatabase(choice: DatabaseChoice): void {
  if (existsSync(choice.path)) return;
  const hint = choice.demo
    ? 'run `livefeed sync --demo --once` (or `livefeed start` without a token) first'
    : 'run `livefeed sync` first (with --db or LIVEFEED_DB if it lives elsewhere), or pass --demo to serve the demo database';
  throw new ConfigError(`no database at ${choice.path}: ${hint}`);
}

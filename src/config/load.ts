import { existsSync } from 'node:fs';
import type { z } from 'zod';
import { type Deployment, deploymentOfFeedRoot } from '../feed/protocol/urls.js';
import type { VerifyMode } from '../feed/signature.js';
import { isPostgresUrl, redactDatabaseUrl, urlPassword } from './databaseUrl.js';
import { OPTIONS } from './options.js';
import { ConfigError, type Env } from './parsers.js';
import type { CommandName, OptionRow } from './row.js';
import { loadYamlParser } from './webhooksFile.js';

type OptionKey = keyof typeof OPTIONS;
type Parsed = { [K in OptionKey]: z.output<(typeof OPTIONS)[K]['schema']> };
type SampleFeedKey = 'sampleFeedPort' | 'sampleFeedHost' | 'sampleFeedRoot';

/**
 * livefeed's whole configuration, validated: one field per row of {@link OPTIONS} (its help says
 * what it is). Durations are in milliseconds; `verify` is decided (fail with a key, off without).
 */
export type Config = Omit<Parsed, SampleFeedKey | 'verify'> & {
  verify: VerifyMode;
  /** The options given by flag or env (not defaulted), for choices that depend on it (`db`). */
  given: ReadonlySet<string>;
};

/** The `sample-feed` command's options. */
export type SampleFeedConfig = Pick<Parsed, SampleFeedKey>;

/** Command-line flags as parsed by the CLI (commander's camelCase names). */
export type Flags = Partial<Record<string, unknown>>;

const ROWS = OPTIONS as Record<OptionKey, OptionRow>;
const KEYS = Object.keys(OPTIONS) as OptionKey[];
const SAMPLE_FEED_KEYS = KEYS.filter((key) => ROWS[key].commands.includes('sample-feed'));
const CONFIG_KEYS = KEYS.filter((key) => !SAMPLE_FEED_KEYS.includes(key));

/** commander's key of a flag: `--poll-interval <s>` → pollInterval, `--no-replication-packets` → replicationPackets. */
function flagKey(flag: string): string {
  const name = flag.split(' ')[0]!.replace(/^--(no-)?/, '');
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** True when the row's flag was given (commander sets a `--no-x` flag's key to true by default). */
function flagGiven(row: OptionRow, flags: Flags): boolean {
  if (!row.flag) return false;
  const value = flags[flagKey(row.flag)];
  return row.flag.startsWith('--no-') ? value === false : value !== undefined;
}

/** Where a row's value came from, for error messages: the flag when given, else the env name. */
function sourceName(key: OptionKey, flags: Flags): string {
  const row = ROWS[key];
  const flag = row.flag?.split(' ')[0];
  if (flag && flagGiven(row, flags)) return flag;
  return row.env ?? flag ?? key;
}

/** The raw (text) values of `keys`: flag, then env, then the row's fallback. */
function rawValues(keys: OptionKey[], flags: Flags, env: Env, given: Set<string>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  const derived: OptionKey[] = [];
  for (const key of keys) {
    const row = ROWS[key];
    const envValue = row.env ? env[row.env] : undefined;
    const fromFlag = flagGiven(row, flags);
    const fromEnv = !fromFlag && envValue !== undefined && envValue !== '';
    if (fromFlag || fromEnv) given.add(key);
    if (row.read) raw[key] = row.read(env);
    else if (fromFlag) raw[key] = flags[flagKey(row.flag!)];
    else if (fromEnv) raw[key] = envValue;
    else if (typeof row.fallback === 'function') derived.push(key);
    else raw[key] = row.fallback;
  }
  // Defaults of one row that follow another's value (feed root from deployment, db from data dir).
  for (const key of derived)
    raw[key] = (ROWS[key].fallback as (raw: Record<string, unknown>) => unknown)(raw);
  return raw;
}

/** Parses `keys` with their rows' schemas. @throws ConfigError naming every bad value, one per line. */
function parseRows(
  keys: OptionKey[],
  flags: Flags,
  env: Env,
  given = new Set<string>(),
): Record<string, unknown> {
  const raw = rawValues(keys, flags, env, given);
  const lines: string[] = [];
  const value: Record<string, unknown> = {};
  for (const key of keys) {
    const result = ROWS[key].schema.safeParse(raw[key], { error: plainIssue });
    if (result.success) {
      value[key] = result.data;
      continue;
    }
    const source = sourceName(key, flags);
    for (const issue of result.error.issues) {
      if (ROWS[key].secret) lines.push(`  ${source}: ${issue.message}`);
      // The variable or flag and its value, as the user wrote them: LIVEFEED_PORT=abc, --port abc.
      else {
        // A repeatable flag's values are shown as its env variable takes them: separated by spaces.
        const text = Array.isArray(raw[key]) ? raw[key].join(' ') : String(raw[key]);
        const shown = ROWS[key].redact?.(text) ?? text;
        lines.push(`  ${source}${source.startsWith('--') ? ' ' : '='}${shown}: ${issue.message}`);
      }
    }
  }
  if (lines.length > 0) throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  return value;
}

/**
 * zod's default issue texts in a user's words ("expected a whole number", not "Invalid input: expected
 * int, received number"); undefined keeps zod's own (and every message a schema sets itself).
 */
function plainIssue(issue: z.core.$ZodRawIssue): string | undefined {
  const bound = (sign: string, limit: unknown) => `expected a number ${sign} ${limit}`;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'int') return 'expected a whole number';
      if (issue.expected === 'number') return 'expected a number';
      return `expected a ${issue.expected}`;
    case 'too_small':
      return issue.origin === 'number' ? bound(issue.inclusive ? '≥' : '>', issue.minimum) : undefined;
    case 'too_big':
      return issue.origin === 'number' ? bound(issue.inclusive ? '≤' : '<', issue.maximum) : undefined;
    case 'invalid_value':
      return `expected one of ${issue.values.map(String).join(', ')}`;
    default:
      return undefined;
  }
}

function invalid(line: string): ConfigError {
  return new ConfigError(`invalid configuration:\n  ${line}`);
}

/**
 * Loads, before {@link loadConfig}, what parsing `command`'s values needs that is costly to import:
 * the YAML parser, when `command` takes `--webhooks-file` and a file is given (flag or env).
 */
export async function prepareConfig(
  command: CommandName,
  flags: Flags,
  env: Env = process.env,
): Promise<void> {
  const webhooks = ROWS.webhooks;
  if (!webhooks.commands.includes(command)) return;
  if (flags.webhooksFile === undefined && !env[webhooks.env!]) return;
  await loadYamlParser();
}

/**
 * The password file goes with a PostgreSQL URL that has no password of its own.
 * @throws ConfigError when it is given for a SQLite file, or with a URL that has a password too.
 */
function checkDatabasePassword(db: string, password: string | undefined): void {
  if (password === undefined) return;
  if (!isPostgresUrl(db))
    throw invalid(
      `LIVEFEED_DB_PASSWORD_FILE is for a postgres:// --db / LIVEFEED_DB, not the SQLite file ${db}`,
    );
  if (urlPassword(db) !== undefined)
    throw invalid(
      `--db / LIVEFEED_DB ${redactDatabaseUrl(db)} has a password and LIVEFEED_DB_PASSWORD_FILE gives one too: give it once`,
    );
}

/**
 * Read replicas go with a PostgreSQL `--db` (they answer its reads); a replica URL takes the password
 * file's password unless it has its own, and having both is refused as for `--db`.
 * @throws ConfigError when replicas are given for a SQLite file, or a replica URL has a password
 *   and LIVEFEED_DB_PASSWORD_FILE gives one too.
 */
function checkReplicas(db: string, replicas: readonly string[], password: string | undefined): void {
  if (replicas.length === 0) return;
  if (!isPostgresUrl(db))
    throw invalid(
      `--db-replica / LIVEFEED_DB_REPLICA needs a postgres:// --db / LIVEFEED_DB (the primary the replicas stream from), not the SQLite file ${db} (README, Read replicas)`,
    );
  const both = replicas.find((url) => password !== undefined && urlPassword(url) !== undefined);
  if (both !== undefined)
    throw invalid(
      `--db-replica / LIVEFEED_DB_REPLICA ${redactDatabaseUrl(both)} has a password and LIVEFEED_DB_PASSWORD_FILE gives one too: give it once`,
    );
}

/**
 * The deployment names the replication packets (FEED.md, Deployments and URLs: `-v2` on production
 * only). Given against a feed root on upstream's other deployment's host, it is a mistake: on the
 * test host production's names never exist, on production the plain names are the older v1 files.
 * @throws ConfigError naming both when they disagree.
 */
function checkDeployment(feedUrl: string, deployment: Deployment, flags: Flags): void {
  const host = deploymentOfFeedRoot(feedUrl);
  if (host === undefined || host === deployment) return;
  throw invalid(
    `${sourceName('deployment', flags)} ${deployment} does not match ${sourceName('feedUrl', flags)} ${feedUrl}, ` +
      `the ${host} deployment's feed root (its replication packets are named replication-N${host === 'production' ? '-v2' : ''}.tar.bz2); ` +
      `set --deployment ${host} or leave it out (README, Configuration)`,
  );
}

/**
 * Builds the one validated Config from command-line flags, then environment, then defaults.
 * @param flags commander options (camelCase keys; undefined = not given)
 * @param env usually process.env (the one place livefeed reads it)
 * @param command the command being run: a command that takes no `--webhooks-file` ignores
 *   LIVEFEED_WEBHOOKS_FILE, which an environment shared by `sync` and `serve` holds (the file may be
 *   on the syncing node only)
 * @throws ConfigError naming every invalid value (never printing the token)
 */
export function loadConfig(flags: Flags, env: Env = process.env, command?: CommandName): Config {
  const given = new Set<string>();
  const webhooksEnv = ROWS.webhooks.env!;
  if (command && !ROWS.webhooks.commands.includes(command) && env[webhooksEnv] !== undefined)
    env = { ...env, [webhooksEnv]: undefined };
  const value = parseRows(CONFIG_KEYS, flags, env, given) as Omit<Config, 'verify' | 'given'> & {
    verify?: VerifyMode;
  };
  if (value.signingKey !== undefined && !existsSync(value.signingKey)) {
    throw invalid(
      `${sourceName('signingKey', flags)} ${value.signingKey}: no such file (an ASCII-armored public key; README, Integrity and reliability)`,
    );
  }
  if (value.from !== undefined && value.to !== undefined && value.from > value.to) {
    throw invalid(`--from ${value.from} is after --to ${value.to}`);
  }
  if (value.freshnessWarningMs > value.freshnessCriticalMs) {
    throw invalid(
      `freshness warning (${value.freshnessWarningMs / 3_600_000} h) is above critical (${value.freshnessCriticalMs / 3_600_000} h)`,
    );
  }
  checkDatabasePassword(value.db, value.dbPassword);
  checkReplicas(value.db, value.dbReplicas, value.dbPassword);
  checkDeployment(value.feedUrl, value.deployment, flags);
  if (value.verify === 'fail' && !value.signingKey) {
    throw invalid(
      `${sourceName('verify', flags)} fail needs a signing key (--signing-key / LIVEFEED_SIGNING_KEY); ` +
        'see the README, Integrity and reliability, for how to export it',
    );
  }
  return { ...value, verify: value.verify ?? (value.signingKey ? 'fail' : 'off'), given };
}

/**
 * The `sample-feed` command's options (flags, then env, then defaults).
 * @throws ConfigError naming every invalid value.
 */
export function loadSampleFeedConfig(flags: Flags, env: Env = process.env): SampleFeedConfig {
  return parseRows(SAMPLE_FEED_KEYS, flags, env) as SampleFeedConfig;
}

/** One flag of a command: commander's flag text and its `--help` line. */
export interface FlagHelp {
  flag: string;
  help: string;
  /** The flag may be given more than once (its value is the list of them). */
  repeatable?: boolean;
}

/** The flags `command` takes, in table order, each with help naming its env variable and default. */
export function flagsOf(command: CommandName): FlagHelp[] {
  return KEYS.map((key) => ROWS[key]).flatMap((row) => {
    if (!row.flag || row.hidden || !row.commands.includes(command)) return [];
    const shown = row.shown ?? (row.fallback === undefined ? undefined : String(row.fallback));
    let suffix = '';
    if (row.env) suffix = ` (env ${row.env}; default ${shown})`;
    else if (shown !== undefined && row.fallback !== false) suffix = ` (default ${shown})`;
    return [
      { flag: row.flag, help: `${row.help}${suffix}`, ...(row.repeatable ? { repeatable: true } : {}) },
    ];
  });
}

/** One option of a command read from the environment only (no flag): its variable(s) and `--help` line. */
export interface EnvHelp {
  /** The variable, or two (`A / B`: the value, or a file holding it). */
  env: string;
  help: string;
}

/**
 * The options `command` reads from the environment only (rows without a flag: secrets, which a flag
 * would show in `ps`, and lists), in table order, each with help naming its default; what `--help`
 * lists under the flags. Hidden rows (values of the system, e.g. `USER`) are left out.
 */
export function envOnlyOf(command: CommandName): EnvHelp[] {
  return KEYS.map((key) => ROWS[key]).flatMap((row) => {
    if (row.flag || !row.env || row.hidden || !row.commands.includes(command)) return [];
    const shown = row.shown ?? (row.fallback === undefined ? undefined : String(row.fallback));
    return [{ env: row.env, help: shown === undefined ? row.help : `${row.help} (default ${shown})` }];
  });
}

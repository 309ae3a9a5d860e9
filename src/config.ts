import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ENTITY_TYPES, type EntityType, parseEntityList } from './feed/entities.js';
import { DEFAULT_FEED_ROOTS, type Deployment } from './feed/protocol/urls.js';
import { type KeepFiles, parseKeepFiles } from './files/retentionPolicy.js';
import { defaultLogFormat, type LogFormat } from './log/format.js';

/**
 * Packets once broken upstream and since republished fixed (FEED.md, Replication packet archives):
 * fetched like any other; no longer skipped by default (issue 11). Kept as a name for tests and docs.
 */
export const REPUBLISHED_PACKETS: readonly number[] = [
  104949, 162718, 162719, 162720, 162721, 162722, 162723, 162724,
];

/** Signature verification mode (issue: integrity by default). */
export type VerifyMode = 'fail' | 'warn' | 'off';

/** livefeed's whole configuration, validated. Durations are in milliseconds. */
export interface Config {
  feedUrl: string;
  deployment: Deployment;
  dataDir: string;
  db: string;
  /** Upstream access token; never logged or shown (FEED.md, Errors). */
  token?: string;
  entities: EntityType[];
  from?: number;
  to?: number;
  once: boolean;
  /** Wait for another sync's writer lock instead of exiting (`--wait`). */
  wait: boolean;
  host: string;
  port: number;
  pollIntervalMs: number;
  /**
   * Time-based settling of missing JSON dumps, or null (the default: only a later packet's JSON dump
   * settles one; FEED.md, Errors). A dump settled by time is asked for again once evidence arrives.
   */
  settleAfterMs: number | null;
  replicationPackets: boolean;
  skipPackets: number[];
  signingKey?: string;
  verify: VerifyMode;
  /** Most decompressed bytes of one archive (archive bombs; issue 4). */
  maxDumpBytes: number;
  /** Which downloaded archives stay under `<dataDir>/files` (issue 4, Files and links). */
  keepFiles: KeepFiles;
  logLevel: string;
  /** Feed paths whose missing `.asc` the operator accepts: stored UNVERIFIED (`--accept-unsigned`). */
  acceptUnsigned: string[];
  /** Let a signing key the verifier would refuse (RSA < 2048 bits, DSA, ElGamal) through (`--allow-weak-signing-key`). */
  allowWeakSigningKey: boolean;
  /** `pretty` (human-readable lines) or `json` (one JSON object per line); default by stderr being a TTY. */
  logFormat: LogFormat;
  mirrorTokens: string[];
  corsOrigins: string[];
  /** `/freshness` answers WARNING from this lag (milliseconds). */
  freshnessWarningMs: number;
  /** `/freshness` answers CRITICAL from this lag (milliseconds). */
  freshnessCriticalMs: number;
}

/** One configuration value: its flag, env name, default and meaning (used by --help and README). */
export interface ConfigOption {
  key: keyof Config;
  flag?: string;
  env?: string;
  default: string;
  description: string;
}

/** Every option with flag, env name and default, in --help order. */
export const CONFIG_OPTIONS: ConfigOption[] = [
  {
    key: 'feedUrl',
    flag: '--feed-url <url>',
    env: 'LIVEFEED_FEED_URL',
    default: DEFAULT_FEED_ROOTS.production,
    description: 'feed root (test deployment: https://test.metabrainz.org/api/musicbrainz)',
  },
  {
    key: 'deployment',
    flag: '--deployment <name>',
    env: 'LIVEFEED_DEPLOYMENT',
    default: 'production',
    description: 'production | test: packet naming and default feed root',
  },
  {
    key: 'dataDir',
    flag: '--data-dir <dir>',
    env: 'LIVEFEED_DATA_DIR',
    default: './data',
    description: 'data directory (database, kept archives)',
  },
  {
    key: 'db',
    flag: '--db <file>',
    env: 'LIVEFEED_DB',
    default: '<data-dir>/livefeed.db',
    description: 'SQLite database file',
  },
  {
    key: 'token',
    env: 'LIVEFEED_TOKEN / LIVEFEED_TOKEN_FILE',
    default: '(none: demo)',
    description: 'upstream access token, or a file holding it; never a flag',
  },
  {
    key: 'entities',
    flag: '--entities <list>',
    env: 'LIVEFEED_ENTITIES',
    default: 'all eleven',
    description: 'comma list of entity types to sync',
  },
  {
    key: 'from',
    flag: '--from <n>',
    env: 'LIVEFEED_FROM',
    default: 'latest - 23 on an empty database',
    description: 'first packet to sync',
  },
  {
    key: 'to',
    flag: '--to <n>',
    env: 'LIVEFEED_TO',
    default: '(latest)',
    description: 'last packet to sync',
  },
  {
    key: 'host',
    flag: '--host <host>',
    env: 'LIVEFEED_HOST',
    default: '127.0.0.1',
    description: 'address the GraphQL server listens on',
  },
  {
    key: 'port',
    flag: '--port <port>',
    env: 'LIVEFEED_PORT',
    default: '4000',
    description: 'port of the GraphQL server',
  },
  {
    key: 'pollIntervalMs',
    flag: '--poll-interval <seconds>',
    env: 'LIVEFEED_POLL_INTERVAL',
    default: '300',
    description: 'seconds between replication-info polls in follow mode (±20% jitter)',
  },
  {
    key: 'settleAfterMs',
    flag: '--settle-after <hours>',
    env: 'LIVEFEED_SETTLE_AFTER',
    default: "(none: only a later packet's JSON dump settles)",
    description:
      "hours after a packet's TIMESTAMP when a missing JSON dump also counts as no changes; re-asked once a later dump appears",
  },
  {
    key: 'replicationPackets',
    flag: '--no-replication-packets',
    env: 'LIVEFEED_REPLICATION_PACKETS',
    default: 'true',
    description: 'do not sync replication packets (row changes, removals): JSON dumps only',
  },
  {
    key: 'skipPackets',
    flag: '--skip-packets <list>',
    env: 'LIVEFEED_SKIP_PACKETS',
    default: '(none)',
    description: 'replication packets never fetched (numbers or ranges, e.g. 104949,162718-162724)',
  },
  {
    key: 'signingKey',
    flag: '--signing-key <file>',
    env: 'LIVEFEED_SIGNING_KEY',
    default: '(none)',
    description:
      'file of ASCII-armored OpenPGP public key(s) that sign the feed; verify every archive with it',
  },
  {
    key: 'verify',
    flag: '--verify <mode>',
    env: 'LIVEFEED_VERIFY',
    default: 'fail with a key, off without',
    description: 'fail | warn | off: what a bad signature does',
  },
  {
    key: 'maxDumpBytes',
    flag: '--max-dump-bytes <size>',
    env: 'LIVEFEED_MAX_DUMP_BYTES',
    default: '64GiB',
    description:
      'most bytes one archive may decompress to (archive bombs); bytes, or with KB MB GB TB / KiB MiB GiB TiB',
  },
  {
    key: 'keepFiles',
    flag: '--keep-files <count|age>',
    env: 'LIVEFEED_KEEP_FILES',
    default: 'all',
    description:
      'downloaded archives kept for the file links and mirror: all, the newest N packets (48), or an age (36h, 7d, 2w)',
  },
  {
    key: 'acceptUnsigned',
    flag: '--accept-unsigned <paths>',
    env: 'LIVEFEED_ACCEPT_UNSIGNED',
    default: '(none)',
    description:
      'comma list of feed paths (json-dumps/json-dump-N/area.tar.xz) stored UNVERIFIED when upstream has no .asc for them',
  },
  {
    key: 'allowWeakSigningKey',
    flag: '--allow-weak-signing-key',
    env: 'LIVEFEED_ALLOW_WEAK_SIGNING_KEY',
    default: 'false',
    description: 'accept a signing key under RSA-2048 or DSA/ElGamal (and its SHA-1 signatures)',
  },
  {
    key: 'logLevel',
    flag: '--log-level <level>',
    env: 'LIVEFEED_LOG_LEVEL',
    default: 'info',
    description: 'pino log level',
  },
  {
    key: 'logFormat',
    flag: '--log-format <format>',
    env: 'LIVEFEED_LOG_FORMAT',
    default: 'pretty on a terminal, json otherwise',
    description: 'pretty (human-readable lines) | json (one JSON object per line, for log collectors)',
  },
  {
    key: 'mirrorTokens',
    env: 'LIVEFEED_MIRROR_TOKENS / LIVEFEED_MIRROR_TOKENS_FILE',
    default: '(open)',
    description: 'tokens the mirror endpoints accept (comma list)',
  },
  {
    key: 'corsOrigins',
    env: 'LIVEFEED_CORS_ORIGINS',
    default: '(same origin)',
    description: 'comma list of origins allowed by CORS',
  },
  {
    key: 'freshnessWarningMs',
    flag: '--freshness-warning <hours>',
    env: 'LIVEFEED_FRESHNESS_WARNING',
    default: '2',
    description: 'hours of lag from which /freshness answers WARNING',
  },
  {
    key: 'freshnessCriticalMs',
    flag: '--freshness-critical <hours>',
    env: 'LIVEFEED_FRESHNESS_CRITICAL',
    default: '6',
    description: 'hours of lag from which /freshness answers CRITICAL (HTTP 503)',
  },
];

/** Command-line flags as parsed by the CLI (commander's camelCase names). */
export type Flags = Partial<Record<string, unknown>>;

const TOKEN_SHAPE = /^[A-Za-z0-9]{40}$/;
const intText = z.coerce.number().int();

const schema = z.object({
  feedUrl: z.url({ protocol: /^https?$/ }),
  deployment: z.enum(['production', 'test']),
  dataDir: z.string().min(1),
  db: z.string().min(1),
  token: z
    .string()
    .regex(TOKEN_SHAPE, 'must be 40 characters of [A-Za-z0-9] (README, Configuration); value not shown')
    .optional(),
  entities: z.string().transform((text, ctx) => {
    try {
      return parseEntityList(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  }),
  from: intText.min(1).optional(),
  to: intText.min(1).optional(),
  once: z.boolean(),
  wait: z.boolean(),
  host: z.string().min(1),
  port: intText.min(0).max(65535),
  pollIntervalMs: z.coerce
    .number()
    .positive()
    .transform((s) => s * 1000),
  settleAfterMs: z.preprocess(
    (v) => (v === null || (typeof v === 'string' && /^(none|off)$/i.test(v.trim())) ? null : v),
    z
      .union([z.null(), z.coerce.number().nonnegative()])
      .transform((h) => (h === null ? null : h * 3_600_000)),
  ),
  replicationPackets: z.union(
    [z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')],
    { error: 'expected true or false' },
  ),
  skipPackets: z.string().transform((text, ctx) => {
    const items = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = items.filter((s) => !/^\d+(-\d+)?$/.test(s));
    if (bad.length)
      ctx.addIssue({ code: 'custom', message: `not packet numbers or ranges: ${bad.join(', ')}` });
    return items.flatMap(expandRange);
  }),
  signingKey: z.string().min(1).optional(),
  verify: z.enum(['fail', 'warn', 'off']).optional(),
  maxDumpBytes: z.string().transform((text, ctx) => {
    const bytes = parseByteSize(text);
    if (bytes === undefined || bytes < 1) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be a positive size in bytes, e.g. 4294967296, 4GiB or 500MB',
      });
      return z.NEVER;
    }
    return bytes;
  }),
  keepFiles: z.string().transform((text, ctx) => {
    try {
      return parseKeepFiles(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  }),
  acceptUnsigned: z.array(
    z.string().regex(/^[^/?#\s][^?#\s]*$/, 'must be feed paths, e.g. json-dumps/json-dump-7/area.tar.xz'),
  ),
  allowWeakSigningKey: z.boolean(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  logFormat: z.enum(['pretty', 'json']),
  mirrorTokens: z.array(z.string().min(1)),
  corsOrigins: z.array(z.string().min(1)),
  freshnessWarningMs: z.coerce
    .number()
    .positive()
    .transform((h) => h * 3_600_000),
  freshnessCriticalMs: z.coerce
    .number()
    .positive()
    .transform((h) => h * 3_600_000),
});

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** Bytes of a size text: digits, optionally a unit (`KB`…`TB` decimal, `KiB`…`TiB` binary); undefined otherwise. */
export function parseByteSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

function expandRange(item: string): number[] {
  const [a, b] = item.split('-').map(Number) as [number, number | undefined];
  if (b === undefined) return [a];
  return Array.from({ length: Math.max(0, b - a + 1) }, (_, i) => a + i);
}

/** Raised when the configuration is invalid; `message` names every bad value, one per line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function readSecretFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(`${what}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}

function commaList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function tokenFrom(env: Env): string | undefined {
  if (env.LIVEFEED_TOKEN) return env.LIVEFEED_TOKEN.trim();
  if (env.LIVEFEED_TOKEN_FILE) return readSecretFile(env.LIVEFEED_TOKEN_FILE, 'LIVEFEED_TOKEN_FILE');
  return undefined;
}

function mirrorTokensFrom(env: Env): string[] {
  if (env.LIVEFEED_MIRROR_TOKENS) return commaList(env.LIVEFEED_MIRROR_TOKENS);
  if (env.LIVEFEED_MIRROR_TOKENS_FILE) {
    return commaList(
      readSecretFile(env.LIVEFEED_MIRROR_TOKENS_FILE, 'LIVEFEED_MIRROR_TOKENS_FILE').replace(/\s+/g, ','),
    );
  }
  return [];
}

/** Where each key's value came from, for error messages. */
function sourceName(key: string, flags: Flags): string {
  const option = CONFIG_OPTIONS.find((o) => o.key === key);
  if (!option) return key;
  const flag = option.flag?.split(' ')[0];
  // commander's key is the flag in camelCase (`--poll-interval` → pollInterval), not the config key
  const flagKey = flag?.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  // commander sets a `--no-x` flag's key to true by default: only false means the flag was given.
  const given = flag?.startsWith('--no-')
    ? flags[flagKey ?? ''] === false
    : flags[flagKey ?? ''] !== undefined;
  if (flag && flagKey && given) return flag;
  return option.env ?? flag ?? key;
}

/**
 * Builds the one validated Config from command-line flags, then environment, then defaults.
 * @param flags commander options (camelCase keys; undefined = not given)
 * @param env usually process.env
 * @throws ConfigError naming every invalid value (never printing the token)
 */
export function loadConfig(flags: Flags, env: Env = process.env): Config {
  const pick = (key: string, envName: string, fallback?: unknown): unknown =>
    flags[key] ?? (env[envName] !== undefined && env[envName] !== '' ? env[envName] : fallback);
  const deployment = pick('deployment', 'LIVEFEED_DEPLOYMENT', 'production');
  const dataDir = String(pick('dataDir', 'LIVEFEED_DATA_DIR', './data'));
  const raw = {
    feedUrl: pick(
      'feedUrl',
      'LIVEFEED_FEED_URL',
      DEFAULT_FEED_ROOTS[deployment as Deployment] ?? DEFAULT_FEED_ROOTS.production,
    ),
    deployment,
    dataDir,
    db: pick('db', 'LIVEFEED_DB', join(dataDir, 'livefeed.db')),
    token: tokenFrom(env),
    entities: pick('entities', 'LIVEFEED_ENTITIES', ENTITY_TYPES.join(',')),
    from: pick('from', 'LIVEFEED_FROM'),
    to: pick('to', 'LIVEFEED_TO'),
    once: Boolean(flags.once),
    wait: Boolean(flags.wait),
    host: pick('host', 'LIVEFEED_HOST', '127.0.0.1'),
    port: pick('port', 'LIVEFEED_PORT', 4000),
    pollIntervalMs: pick('pollInterval', 'LIVEFEED_POLL_INTERVAL', 300),
    settleAfterMs: pick('settleAfter', 'LIVEFEED_SETTLE_AFTER', null),
    // commander sets replicationPackets=false for --no-replication-packets and true by default
    replicationPackets:
      flags.replicationPackets === false ? false : (env.LIVEFEED_REPLICATION_PACKETS ?? true),
    skipPackets: pick('skipPackets', 'LIVEFEED_SKIP_PACKETS', ''),
    signingKey: pick('signingKey', 'LIVEFEED_SIGNING_KEY'),
    verify: pick('verify', 'LIVEFEED_VERIFY'),
    maxDumpBytes: String(pick('maxDumpBytes', 'LIVEFEED_MAX_DUMP_BYTES', '64GiB')),
    keepFiles: String(pick('keepFiles', 'LIVEFEED_KEEP_FILES', 'all')),
    acceptUnsigned: commaList(String(pick('acceptUnsigned', 'LIVEFEED_ACCEPT_UNSIGNED', ''))),
    allowWeakSigningKey:
      flags.allowWeakSigningKey === true || /^(true|1)$/.test(env.LIVEFEED_ALLOW_WEAK_SIGNING_KEY ?? ''),
    logLevel: pick('logLevel', 'LIVEFEED_LOG_LEVEL', 'info'),
    logFormat: pick('logFormat', 'LIVEFEED_LOG_FORMAT', defaultLogFormat()),
    mirrorTokens: mirrorTokensFrom(env),
    corsOrigins: commaList(env.LIVEFEED_CORS_ORIGINS),
    freshnessWarningMs: pick('freshnessWarning', 'LIVEFEED_FRESHNESS_WARNING', 2),
    freshnessCriticalMs: pick('freshnessCritical', 'LIVEFEED_FRESHNESS_CRITICAL', 6),
  };
  const result = schema.safeParse(raw);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      const source = sourceName(key, flags);
      if (key === 'token' || key === 'mirrorTokens') return `  ${source}: ${issue.message}`;
      // The variable or flag and its value, as the user wrote them: LIVEFEED_PORT=abc, --port abc.
      const value = String(raw[key as keyof typeof raw]);
      return `  ${source}${source.startsWith('--') ? ' ' : '='}${value}: ${issue.message}`;
    });
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const value = result.data;
  if (value.signingKey !== undefined && !existsSync(value.signingKey)) {
    throw new ConfigError(
      `invalid configuration:\n  ${sourceName('signingKey', flags)} ${value.signingKey}: no such file (an ASCII-armored public key; README, Integrity and reliability)`,
    );
  }
  if (value.from !== undefined && value.to !== undefined && value.from > value.to) {
    throw new ConfigError(`invalid configuration:\n  --from ${value.from} is after --to ${value.to}`);
  }
  if (value.freshnessWarningMs > value.freshnessCriticalMs) {
    throw new ConfigError(
      `invalid configuration:\n  freshness warning (${value.freshnessWarningMs / 3_600_000} h) is above critical (${value.freshnessCriticalMs / 3_600_000} h)`,
    );
  }
  if (value.verify === 'fail' && !value.signingKey) {
    throw new ConfigError(
      `invalid configuration:\n  ${sourceName('verify', flags)} fail needs a signing key (--signing-key / LIVEFEED_SIGNING_KEY); ` +
        'see the README, Signatures, for how to export it',
    );
  }
  return {
    ...value,
    verify: value.verify ?? (value.signingKey ? 'fail' : 'off'),
  };
}

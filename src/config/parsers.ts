import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { z } from 'zod';
import { parseEntityList } from '../feed/entities.js';
import { parseKeepFiles } from '../files/retentionPolicy.js';
import { readWebhooksFile } from './webhooksFile.js';

/** Raised when the configuration is invalid; `message` names every bad value, one per line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Environment variables by name (usually process.env, read only by src/config/load.ts). */
export type Env = Record<string, string | undefined>;

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

/** The items of a comma list, trimmed, empty ones left out. */
export function commaList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A text parsed by `parse`, whose thrown message becomes the zod issue. */
function parsedBy<T>(parse: (text: string) => T) {
  return z.string().transform((text, ctx) => {
    try {
      return parse(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
}

/** An integer given as text or number. */
export const intText = z.coerce.number().int();

/** Seconds (text or number) in milliseconds; positive. */
export const positiveSeconds = z.coerce
  .number()
  .positive()
  .transform((s) => s * 1000);

/** An upstream token's shape; the message never shows the value. */
export const tokenText = z
  .string()
  .regex(
    /^[A-Za-z0-9]{40}$/,
    'must be 40 characters of [A-Za-z0-9] (README, Configuration); value not shown',
  );

/** Hours (text or number) in milliseconds; positive. */
export const positiveHours = z.coerce
  .number()
  .positive()
  .transform((h) => h * 3_600_000);

/** A comma list of entity types (`all` spelled out by the default). */
export const entityList = parsedBy(parseEntityList);

/** `--keep-files`: all, a count or an age. */
export const keepFilesPolicy = parsedBy(parseKeepFiles);

/** `--webhooks-file`: the webhooks it lists, validated (README, Webhooks); none when not given. */
export const webhooksFile = z
  .string()
  .optional()
  .transform((path, ctx) => {
    if (path === undefined || path === '') return [];
    try {
      return readWebhooksFile(path);
    } catch (error) {
      // One issue per problem: each becomes a line naming the file (`LIVEFEED_WEBHOOKS_FILE=hooks.yaml: ...`).
      for (const line of (error as Error).message.split('\n'))
        ctx.addIssue({ code: 'custom', message: line });
      return z.NEVER;
    }
  });

/** `--settle-after`: hours in milliseconds, or null for none/off. */
export const settleHours = z.preprocess(
  (v) => (v === null || (typeof v === 'string' && /^(none|off)$/i.test(v.trim())) ? null : v),
  z.union([z.null(), z.coerce.number().nonnegative()]).transform((h) => (h === null ? null : h * 3_600_000)),
);

/** A boolean flag, or an env value true/false/1/0. */
export const booleanText = z.union(
  [z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')],
  { error: 'expected true or false' },
);

/** A flag given (true) or an env value: only `true` and `1` turn it on. */
export const switchText = z.union([z.boolean(), z.string().transform((v) => /^(true|1)$/.test(v))]);

/** Packet numbers and ranges (`104949,162718-162724`), expanded. */
export const packetList = z.string().transform((text, ctx) => {
  const items = commaList(text);
  const bad = items.filter((s) => !/^\d+(-\d+)?$/.test(s));
  if (bad.length)
    ctx.addIssue({ code: 'custom', message: `not packet numbers or ranges: ${bad.join(', ')}` });
  return items.flatMap(expandRange);
});

/** A size in bytes (`4GiB`, `500MB`, `4294967296`). */
export const byteSize = z.string().transform((text, ctx) => {
  const bytes = parseByteSize(text);
  if (bytes === undefined || bytes < 1) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a positive size in bytes, e.g. 4294967296, 4GiB or 500MB',
    });
    return z.NEVER;
  }
  return bytes;
});

/** A comma list whose items each match `item`. */
export function listOf(item: z.ZodString) {
  return z.preprocess((v) => (typeof v === 'string' ? commaList(v) : v), z.array(item));
}

/** Feed paths (`json-dumps/json-dump-7/area.tar.xz`), a comma list. */
export const feedPaths = listOf(
  z.string().regex(/^[^/?#\s][^?#\s]*$/, 'must be feed paths, e.g. json-dumps/json-dump-7/area.tar.xz'),
);

/** Any value set turns it on (NO_COLOR, no-color.org). */
export const anyValueOn = z.union([z.literal(false), z.string().transform(() => true)]);

/**
 * A comma list of secrets from `env[name]`, or else from the file named by `env[fileName]`
 * (separated by commas or whitespace).
 * @throws ConfigError naming `fileName` and the path when the file cannot be read.
 */
export function secretListFrom(env: Env, name: string, fileName: string): string[] {
  if (env[name]) return commaList(env[name]);
  return commaList(secretFrom(env, name, fileName)?.replace(/\s+/g, ','));
}

/**
 * A secret from `env[name]`, or else from the file named by `env[fileName]` (trimmed); undefined
 * when neither is set.
 * @throws ConfigError naming `fileName` and the path when the file cannot be read.
 */
export function secretFrom(env: Env, name: string, fileName: string): string | undefined {
  if (env[name]) return env[name].trim();
  const path = env[fileName];
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(
      `${fileName}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
}

/** The OS user running livefeed (recorded when it accepts an unsigned file), or `unknown`. */
export function operatorName(env: Env): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? 'unknown';
  }
}

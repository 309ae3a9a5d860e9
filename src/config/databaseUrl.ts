import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, type Env } from './parsers.js';

/**
 * `--db` / `LIVEFEED_DB` is a SQLite file, or a PostgreSQL URL (`postgres://` or `postgresql://`,
 * issue 17). The PostgreSQL password comes from the URL or from the file named by
 * `LIVEFEED_DB_PASSWORD_FILE`, and is never shown: messages name the database by
 * {@link redactDatabaseUrl}, and the CLI scrubs {@link databaseSecrets} from every error it prints.
 */

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** True when `--db` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return POSTGRES_URL.test(value);
}

/**
 * `value` with the password of a PostgreSQL URL replaced by `***` (and a `password=` query
 * parameter too); any other value (a SQLite path) unchanged. A URL that does not parse is cut to
 * its scheme, so that nothing of it leaks.
 */
export function redactDatabaseUrl(value: string): string {
  if (!isPostgresUrl(value)) return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${value.slice(0, value.indexOf(':'))}://(not a URL)`;
  }
  if (url.password) url.password = '***';
  if (url.searchParams.has('password')) url.searchParams.set('password', '***');
  return url.toString().replace('%2A%2A%2A', '***');
}

/**
 * Checks a PostgreSQL `--db` value: it must parse as a URL with a host (or a `host=` socket folder).
 * @returns the reason it is refused, or undefined when it is fine (SQLite paths are always fine).
 */
export function databaseUrlProblem(value: string): string | undefined {
  if (!isPostgresUrl(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a valid URL (postgres://user@host:5432/database; README, PostgreSQL)';
  }
  if (!url.hostname && !url.searchParams.get('host'))
    return 'names no host (postgres://user@host:5432/database; README, PostgreSQL)';
  return undefined;
}

/** `--db`: a SQLite file, or a PostgreSQL URL that parses and names a host. */
export const databaseText = z
  .string()
  .min(1)
  .superRefine((value, ctx) => {
    const problem = databaseUrlProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** The password of a PostgreSQL URL (decoded), or undefined when it has none. */
export function urlPassword(value: string): string | undefined {
  if (!isPostgresUrl(value)) return undefined;
  try {
    const url = new URL(value);
    const password = url.password ? decodeURIComponent(url.password) : url.searchParams.get('password');
    return password || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The password in the file named by `LIVEFEED_DB_PASSWORD_FILE`, a trailing newline (`\n` or
 * `\r\n`) trimmed and nothing else (a password may begin or end with spaces); undefined when the
 * variable is unset.
 * @throws ConfigError naming the variable and the path (never the content) when the file cannot
 *   be read or holds no password.
 */
export function readDatabasePassword(env: Env): string | undefined {
  const path = env.LIVEFEED_DB_PASSWORD_FILE;
  if (!path) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `LIVEFEED_DB_PASSWORD_FILE: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new ConfigError(`LIVEFEED_DB_PASSWORD_FILE: ${path} is empty`);
  return password;
}

/**
 * The secrets of the database configuration, for scrubbing from messages: the password file's
 * content and the passwords of the `--db` URL and of the `--db-replica` URLs, decoded and as written.
 */
export function databaseSecrets(
  db: string | undefined,
  password: string | undefined,
  replicas: readonly string[] = [],
): string[] {
  const secrets = [password];
  for (const url of [db, ...replicas]) {
    const fromUrl = url === undefined ? undefined : urlPassword(url);
    secrets.push(fromUrl, fromUrl === undefined ? undefined : encodeURIComponent(fromUrl));
  }
  return secrets.filter((s): s is string => !!s);
}

/**
 * The connection string to hand to the PostgreSQL driver: `db` with `password` (from the file) put
 * in (loadConfig refuses a password in both). Kept in memory only; never print it (print
 * {@link redactDatabaseUrl} of `db`).
 */
export function postgresConnectionString(db: string, password: string | undefined): string {
  if (password === undefined) return db;
  const url = new URL(db);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/** The URLs of `LIVEFEED_DB_REPLICA`: separated by spaces (or any whitespace, which no URL holds). */
function replicaUrls(value: string | string[]): string[] {
  return typeof value === 'string' ? value.split(/\s+/).filter((url) => url !== '') : value;
}

/**
 * `--db-replica` (repeatable: commander gives the list) or `LIVEFEED_DB_REPLICA` (URLs separated
 * by whitespace): each a `postgres://` URL that parses and names a host. Empty: no replica.
 */
export const replicaList = z
  .union([z.string(), z.array(z.string())])
  .transform(replicaUrls)
  .superRefine((urls, ctx) => {
    for (const url of urls) {
      const problem = isPostgresUrl(url)
        ? databaseUrlProblem(url)
        : 'is not a postgres:// URL (a read replica of a PostgreSQL --db; README, Read replicas)';
      if (problem) ctx.addIssue({ code: 'custom', message: `${redactDatabaseUrl(url)} ${problem}` });
    }
  });

/** The raw `--db-replica` / `LIVEFEED_DB_REPLICA` text (URLs joined by spaces) with every password redacted. */
export function redactReplicaList(raw: string): string {
  return raw
    .split(/(\s+)/)
    .map((part) => (/^\s*$/.test(part) ? part : redactDatabaseUrl(part)))
    .join('');
}

/**
 * The connections of the read replicas, in the order given: each URL with the password of
 * `LIVEFEED_DB_PASSWORD_FILE` put in (loadConfig refuses a replica URL with a password of its own
 * when the file gives one too), and its name as messages show it. Kept in memory only.
 */
export function replicaConnections(
  replicas: readonly string[],
  password: string | undefined,
): { connectionString: string; display: string }[] {
  return replicas.map((url) => ({
    connectionString: postgresConnectionString(url, password),
    display: redactDatabaseUrl(url),
  }));
}

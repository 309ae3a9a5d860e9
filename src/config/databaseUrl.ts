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
    return 'not a valid URL (postgres://user@host:5432/database; README, PostgreSQL (in progress))';
  }
  if (!url.hostname && !url.searchParams.get('host'))
    return 'names no host (postgres://user@host:5432/database; README, PostgreSQL (in progress))';
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
 * content and the URL's password, decoded and as written.
 */
export function databaseSecrets(db: string | undefined, password: string | undefined): string[] {
  const fromUrl = db === undefined ? undefined : urlPassword(db);
  const written = fromUrl === undefined ? undefined : encodeURIComponent(fromUrl);
  return [password, fromUrl, written].filter((s): s is string => !!s);
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

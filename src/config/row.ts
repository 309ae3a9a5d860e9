import type { z } from 'zod';
import type { Env } from './parsers.js';

/** The `livefeed` commands (src/cli/): an option row names those that take its flag. */
export type CommandName = 'sync' | 'serve' | 'start' | 'status' | 'import' | 'bootstrap' | 'sample-feed';

/**
 * One option: where its value comes from (flag, then env, then default), how it is parsed, and
 * what `--help` says. A row without `flag` is read from the environment only.
 */
export interface OptionRow<S extends z.ZodType = z.ZodType> {
  /** commander flag with its argument (`--port <port>`); `--no-x` for a switch that is on by default. */
  flag?: string;
  /** Environment variable (or two, `A / B`, when `read` reads them). */
  env?: string;
  /** The value parsed when neither flag nor env is given; a function of the raw values of other rows. */
  fallback?: string | number | boolean | null | ((raw: Record<string, unknown>) => unknown);
  /** The default as `--help` shows it, when `String(fallback)` would not say it. */
  shown?: string;
  help: string;
  /** Commands that take the flag. */
  commands: readonly CommandName[];
  schema: S;
  /** Reads the environment itself (secret files); the flag and `env` are then not looked at. */
  read?: (env: Env) => unknown;
  /** Errors name the variable but never print its value. */
  secret?: boolean;
  /** How errors print a value that may hold a secret (the password of a `--db` URL). */
  redact?: (raw: string) => string;
  /** The flag may be given more than once: its value is then the list of every value given. */
  repeatable?: boolean;
  /** Not listed in `--help` (values of the system, not livefeed's options). */
  hidden?: boolean;
}

/** Types one row (its schema's output type is kept for `Config`). */
export const row = <S extends z.ZodType>(option: OptionRow<S>) => option;
/** Commands that sync. */
export const SYNCING = ['sync', 'start'] as const;
/** Commands that serve GraphQL. */
export const SERVING = ['serve', 'start'] as const;
/** Commands that open a database. */
export const ALL = ['sync', 'serve', 'start', 'status', 'import', 'bootstrap'] as const;
/** Commands that download and verify archives. */
export const VERIFYING = ['sync', 'start', 'bootstrap'] as const;

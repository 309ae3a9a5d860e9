import { ConfigError } from '../config.js';
import {
  FeedAuthError,
  FeedDeploymentError,
  FeedHttpError,
  FeedNetworkError,
  SigningKeyFileError,
  safeMessage,
} from '../feed/errors.js';
import { LockHeldError, WeakSigningKeyError } from '../sync/errors.js';

/** Exit codes of the CLI (README, Exit codes). */
export const EXIT = {
  ok: 0,
  /** `sync --once`: a file failed. */
  failedFiles: 1,
  /** `status`: no database yet. */
  nothingSynced: 1,
  config: 2,
  auth: 3,
  unexpected: 4,
  locked: 5,
  unreachable: 6,
  /** A second Ctrl-C while stopping: 128 + SIGINT. */
  interrupted: 130,
} as const;

/**
 * Says on stderr what went wrong and returns the exit code for it: configuration (a weak signing
 * key included) 2, refused
 * token 3, writer lock held 5, feed unreachable (network, 5xx) 6, stopped by a signal 0, else 4.
 * @param secrets the upstream token and the database password of this run (when loaded), scrubbed
 *   from every message printed.
 */
export function reportError(error: unknown, secrets: readonly (string | undefined)[]): number {
  const say = (text: string) => process.stderr.write(`livefeed: ${text}\n`);
  // A signing key file that cannot be used, a weak signing key, or a feed root of the other
  // deployment: configuration mistakes too.
  if (
    error instanceof ConfigError ||
    error instanceof SigningKeyFileError ||
    error instanceof WeakSigningKeyError ||
    error instanceof FeedDeploymentError
  ) {
    say(safeMessage(error, secrets));
    return EXIT.config;
  }
  if (error instanceof FeedAuthError) {
    say(safeMessage(error, secrets));
    return EXIT.auth;
  }
  if (error instanceof LockHeldError) {
    say(safeMessage(error, secrets));
    return EXIT.locked;
  }
  // A port another process listens on: a choice the user makes (`--port`), not an unexpected error.
  if ((error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
    say(
      `${safeMessage(error, secrets)}: another process listens there; choose another with --port (README, Commands)`,
    );
    return EXIT.config;
  }
  if (error instanceof FeedNetworkError || (error instanceof FeedHttpError && error.status >= 500)) {
    say(
      `the feed is unreachable: ${safeMessage(error, secrets)} (check --feed-url, or --dumps-url for bootstrap, and the network; README, Exit codes)`,
    );
    return EXIT.unreachable;
  }
  if ((error as Error)?.name === 'AbortError' || /stopped by SIG/.test(String((error as Error)?.message)))
    return EXIT.ok;
  say(safeMessage(error, secrets));
  return EXIT.unexpected;
}

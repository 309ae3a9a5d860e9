/**
 * An answer of the feed that no retry or later pass can change, because the configuration is
 * wrong: it stops the sync (`sync --once` and follow mode alike) instead of being recorded
 * against a file.
 */
export class FeedFatalError extends Error {}

/** The feed refused the access token (400 or 403; FEED.md, Errors). Fatal: never retried. */
export class FeedAuthError extends FeedFatalError {
  override name = 'FeedAuthError';
  constructor(
    readonly status: number,
    readonly url: string,
    body: string,
  ) {
    const what = status === 400 ? 'no access token was sent' : 'the access token is invalid or revoked';
    super(
      `feed refused the request: ${what} (HTTP ${status} "${body.trim()}") for ${url}; check LIVEFEED_TOKEN`,
    );
  }
}

/**
 * The feed root serves the other deployment's replication packet names (FEED.md, Deployments and
 * URLs: `-v2` on production only) and not those of `--deployment`: every packet would answer 404
 * and wait. Fatal. `asked` and `found` are file names (no token).
 */
export class FeedDeploymentError extends FeedFatalError {
  override name = 'FeedDeploymentError';
  constructor(deployment: string, asked: string, found: string, other: string) {
    super(
      `the feed has no ${asked} but has ${found}: it serves the ${other} deployment's packet names, ` +
        `not those of --deployment ${deployment}; set --deployment ${other} / LIVEFEED_DEPLOYMENT=${other} ` +
        '(README, Configuration)',
    );
  }
}

/** An HTTP answer the client does not accept, after retries where they apply. `url` is redacted. */
export class FeedHttpError extends Error {
  override name = 'FeedHttpError';
  constructor(
    readonly status: number,
    readonly url: string,
    body: string,
  ) {
    super(`HTTP ${status} from ${url}${body ? `: ${body.trim().slice(0, 200)}` : ''}`);
  }
}

/** A transport failure (connection, timeout, truncated body) after retries. `url` is redacted. */
export class FeedNetworkError extends Error {
  override name = 'FeedNetworkError';
  constructor(
    readonly url: string,
    reason: string,
    readonly attempts: number,
  ) {
    super(`cannot fetch ${url} after ${attempts} attempt(s): ${reason}`);
  }
}

/**
 * The operator's signing key file cannot be used (unreadable, empty, no armored public key, a
 * secret key): a configuration mistake, which the CLI reports as one (exit 2).
 */
export class SigningKeyFileError extends Error {
  override name = 'SigningKeyFileError';
}

/** An archive whose contents break the feed's contract (FEED.md): wrong sequence, missing member, ... */
export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

/**
 * A dump whose REPLICATION_SEQUENCE is not the packet it was fetched or imported as (FEED.md, JSON
 * dump archives). Its own class so `livefeed import` can say which `--packet` the file is.
 */
export class SequenceMismatchError extends ArchiveError {
  override name = 'SequenceMismatchError';
  constructor(
    where: string,
    /** The archive's REPLICATION_SEQUENCE. */
    readonly found: number,
    /** The packet it was taken as. */
    readonly expected: number,
  ) {
    super(`${where}: REPLICATION_SEQUENCE is ${found}, expected ${expected}`);
  }
}

/** Message of any thrown value, with `secret` (the token; or several: the database password too) removed wherever it appears. */
export function safeMessage(error: unknown, secret?: string | readonly (string | undefined)[]): string {
  let text = error instanceof Error ? `${error.message}` : String(error);
  for (const one of typeof secret === 'string' ? [secret] : (secret ?? []))
    if (one) text = text.split(one).join('***');
  return text;
}

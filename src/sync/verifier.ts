import type { Readable } from 'node:stream';
import { describeStrength, keyStrength } from '../feed/keyStrength.js';
import {
  type SignatureFailureKind,
  type SignatureStatus,
  type VerifyMode,
  verifyFileSignature,
} from '../feed/signature.js';
import { describeKeys, isUpstreamKey, loadSigningKeys, type SigningKeys } from '../feed/signingKeys.js';
import type { Logger } from '../logger.js';
import { WeakSigningKeyError } from './errors.js';

/** Outcome of checking one archive against its detached signature. */
export interface Verdict {
  status: SignatureStatus;
  fingerprint: string | null;
  reason: string | null;
  /** Which kind of failure, for INVALID; `missing` for MISSING. */
  kind?: SignatureFailureKind | 'missing';
}

/**
 * Kinds of {@link SignatureError}: a verdict's kind, or `damaged` for a signature mismatch over a
 * body that does not decompress (cut or corrupted in transit: fetched again).
 */
export type SignatureErrorKind = SignatureFailureKind | 'missing' | 'damaged';

/**
 * Raised in `fail` mode when a signature is bad or missing; the file is not stored. `kind` tells a
 * failure a new download can cure (`malformed`, a `mismatch` of a body that does not decompress)
 * from a deterministic one (FEED.md, Signatures); `file` is the feed path.
 */
export class SignatureError extends Error {
  override name = 'SignatureError';
  /** True when a new download may succeed: the signature was cut, or the body was damaged. */
  get transient(): boolean {
    return this.kind === 'malformed' || this.kind === 'damaged';
  }
  constructor(
    message: string,
    readonly kind: SignatureErrorKind = 'mismatch',
    readonly file: string = '',
  ) {
    super(message);
  }
}

/** Checks archives against their `.asc` according to the verify mode (FEED.md, Signatures). */
export interface Verifier {
  readonly mode: VerifyMode;
  readonly enabled: boolean;
  /**
   * @param file the archive's path, or a stream of its bytes (read to its end when checked)
   * @param signature the `.asc` text, null when the feed had none (404)
   * @throws SignatureError in `fail` mode for INVALID or MISSING
   */
  check(
    file: string | Readable,
    fileName: string,
    signature: string | null,
    signal?: AbortSignal,
  ): Promise<Verdict>;
}

/** Operator choices that loosen verification for named files or one key (issue 11). */
export interface VerifierOptions {
  /** Feed paths whose missing `.asc` is accepted: stored UNVERIFIED, logged (`--accept-unsigned`). */
  acceptUnsigned?: readonly string[];
  /** Let a weak signing key through (`--allow-weak-signing-key`). */
  allowWeakSigningKey?: boolean;
  /** Accept SHA-1 signatures by the signing keys (`--allow-sha1-signatures`), logged once. */
  allowSha1Signatures?: boolean;
  /** Who runs livefeed (the OS user), named when a file is accepted unsigned; default `unknown`. */
  operator?: string;
}

/**
 * Builds the verifier: with a key file, logs each key's fingerprint, algorithm and size, refuses a
 * key the verifier would reject every signature of (RSA under 2048 bits, DSA, ElGamal) unless
 * `allowWeakSigningKey`, accepts SHA-1 signatures only with `allowSha1Signatures` (both logged
 * once), warns when upstream's documented key is not among them, and verifies
 * every archive (OpenPGP, binary mode); without one, every file is UNVERIFIED and the sync says so once.
 * @throws Error naming the key file when it cannot be loaded; WeakSigningKeyError for a weak key (the CLI exits 2).
 */
export async function createVerifier(
  signingKey: string | undefined,
  mode: VerifyMode,
  logger: Logger,
  options: VerifierOptions = {},
): Promise<Verifier> {
  if (!signingKey || mode === 'off') {
    logger.warn(
      { event: 'verification-off' },
      signingKey
        ? 'signature verification is off (--verify off): files are stored UNVERIFIED'
        : 'no signing key (--signing-key / LIVEFEED_SIGNING_KEY): nothing is verified, files are stored UNVERIFIED',
    );
    return {
      mode,
      enabled: false,
      check: async () => ({ status: 'UNVERIFIED', fingerprint: null, reason: null }),
    };
  }
  const keys = await loadSigningKeys(signingKey);
  keys.weakAllowed = checkKeyStrength(keys, signingKey, logger, !!options.allowWeakSigningKey);
  if (options.allowSha1Signatures) {
    keys.sha1Allowed = true;
    logger.warn(
      { event: 'sha1-signatures-allowed', flag: '--allow-sha1-signatures' },
      '--allow-sha1-signatures: accepting SHA-1 signatures by the signing keys (older archives signed by gpg 1.x)',
    );
  }
  logger.info({ event: 'signing-keys', keys: describeKeys(keys), mode }, 'verifying signatures');
  if (!keys.fingerprints.some(isUpstreamKey)) {
    logger.warn(
      { event: 'foreign-signing-key', fingerprints: keys.fingerprints },
      "signing key is not upstream's documented data dump key",
    );
  }
  const accepted = new Set(options.acceptUnsigned ?? []);
  const operator = options.operator ?? 'unknown';
  return {
    mode,
    enabled: true,
    check: (file, name, signature, signal) =>
      verify({ keys, mode, logger, accepted, operator }, file, name, signature, signal),
  };
}

/**
 * Logs every key's fingerprint, algorithm and size; returns the fingerprints of weak keys let
 * through (logged once).
 * @throws WeakSigningKeyError naming `--allow-weak-signing-key` for a weak key when not allowed.
 */
function checkKeyStrength(keys: SigningKeys, file: string, logger: Logger, allowWeak: boolean): Set<string> {
  const weak = new Set<string>();
  for (const key of keys.keys) {
    const strength = keyStrength(key);
    logger.info(
      {
        event: 'signing-key',
        fingerprint: strength.fingerprint,
        algorithm: strength.algorithm,
        bits: strength.bits,
      },
      `signing key ${strength.fingerprint}: ${describeStrength(strength)}`,
    );
    if (!strength.weakness) continue;
    if (!allowWeak) {
      throw new WeakSigningKeyError(
        `signing key ${strength.fingerprint} in ${file} is a ${strength.weakness}: every signature by it would be ` +
          'refused. Use the right key (see the README, Integrity and reliability) or pass --allow-weak-signing-key to accept it',
      );
    }
    weak.add(strength.fingerprint);
    logger.warn(
      {
        event: 'weak-signing-key-allowed',
        fingerprint: strength.fingerprint,
        flag: '--allow-weak-signing-key',
      },
      `--allow-weak-signing-key: accepting ${strength.weakness} ${strength.fingerprint} and its SHA-1 signatures`,
    );
  }
  return weak;
}

interface VerifyState {
  keys: SigningKeys;
  mode: VerifyMode;
  logger: Logger;
  accepted: ReadonlySet<string>;
  operator: string;
}

async function verify(
  state: VerifyState,
  file: string | Readable,
  fileName: string,
  signature: string | null,
  signal?: AbortSignal,
): Promise<Verdict> {
  const { logger, mode } = state;
  if (signature === null && state.accepted.has(fileName)) {
    const user = state.operator;
    logger.warn(
      { event: 'accepted-unsigned', file: fileName, user, flag: '--accept-unsigned' },
      `${fileName} has no signature upstream; stored UNVERIFIED because ${user} accepted it with --accept-unsigned`,
    );
    return {
      status: 'UNVERIFIED',
      fingerprint: null,
      reason: `accepted unsigned by ${user} (--accept-unsigned)`,
    };
  }
  const result =
    signature === null
      ? {
          status: 'MISSING' as const,
          reason: 'no signature file (.asc) on the feed',
          kind: 'missing' as const,
        }
      : await verifyFileSignature(file, signature, state.keys, signal);
  const verdict: Verdict = {
    status: result.status,
    fingerprint: 'fingerprint' in result ? (result.fingerprint ?? null) : null,
    reason: result.reason ?? null,
    kind: result.kind,
  };
  if (verdict.status === 'VERIFIED') return verdict;
  const message = `signature of ${fileName} is ${verdict.status}: ${verdict.reason}`;
  if (mode === 'fail') throw new SignatureError(message, verdict.kind, fileName);
  logger.warn({ event: 'signature-warning', file: fileName, status: verdict.status }, message);
  return verdict;
}

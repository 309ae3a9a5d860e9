import type { VerifyMode } from '../config.js';
import {
  describeKeys,
  isUpstreamKey,
  loadSigningKeys,
  type SignatureStatus,
  type SigningKeys,
  verifyFileSignature,
} from '../feed/signature.js';
import type { Logger } from '../logger.js';

/** Outcome of checking one archive against its detached signature. */
export interface Verdict {
  status: SignatureStatus;
  fingerprint: string | null;
  reason: string | null;
}

/** Raised in `fail` mode when a signature is bad or missing; the file is not stored. */
export class SignatureError extends Error {
  override name = 'SignatureError';
}

/** Checks archives against their `.asc` according to the verify mode (FEED.md, Signatures). */
export interface Verifier {
  readonly mode: VerifyMode;
  readonly enabled: boolean;
  /**
   * @param signature the `.asc` text, null when the feed had none (404)
   * @throws SignatureError in `fail` mode for INVALID or MISSING
   */
  check(filePath: string, fileName: string, signature: string | null, signal?: AbortSignal): Promise<Verdict>;
}

/**
 * Builds the verifier: with a key file, verifies every archive (OpenPGP, binary mode) and logs the
 * fingerprints in use, warning when upstream's documented key is not among them; without one,
 * every file is UNVERIFIED and the sync says so once.
 * @throws Error naming the key file when it cannot be loaded.
 */
export async function createVerifier(
  signingKey: string | undefined,
  mode: VerifyMode,
  logger: Logger,
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
  logger.info({ event: 'signing-keys', keys: describeKeys(keys), mode }, 'verifying signatures');
  if (!keys.fingerprints.some(isUpstreamKey)) {
    logger.warn(
      { event: 'foreign-signing-key', fingerprints: keys.fingerprints },
      "signing key is not upstream's documented data dump key",
    );
  }
  return {
    mode,
    enabled: true,
    check: (file, name, signature, signal) => verify(keys, mode, logger, file, name, signature, signal),
  };
}

async function verify(
  keys: SigningKeys,
  mode: VerifyMode,
  logger: Logger,
  filePath: string,
  fileName: string,
  signature: string | null,
  signal?: AbortSignal,
): Promise<Verdict> {
  const result =
    signature === null
      ? { status: 'MISSING' as const, reason: 'no signature file (.asc) on the feed' }
      : await verifyFileSignature(filePath, signature, keys, signal);
  const verdict: Verdict = {
    status: result.status,
    fingerprint: 'fingerprint' in result ? (result.fingerprint ?? null) : null,
    reason: result.reason ?? null,
  };
  if (verdict.status === 'VERIFIED') return verdict;
  const message = `signature of ${fileName} is ${verdict.status}: ${verdict.reason}`;
  if (mode === 'fail') throw new SignatureError(message);
  logger.warn({ event: 'signature-warning', file: fileName, status: verdict.status }, message);
  return verdict;
}

import type * as openpgp from 'openpgp';

/** What a signing key is, as printed at start-up, and why the verifier would refuse it (if it would). */
export interface KeyStrength {
  /** Primary key fingerprint, uppercase hex. */
  fingerprint: string;
  /** `RSA`, `DSA`, `ElGamal`, `EdDSA`, `ECDSA`, … (the primary key's). */
  algorithm: string;
  /** Key size in bits (RSA, DSA, ElGamal) or null (elliptic curves: see `curve`). */
  bits: number | null;
  curve: string | null;
  /** Why every signature by it would be refused (openpgp's defaults), or null when it is accepted. */
  weakness: string | null;
}

const NAMES: Record<string, string> = {
  rsaEncryptSign: 'RSA',
  rsaSign: 'RSA',
  rsaEncrypt: 'RSA',
  dsa: 'DSA',
  elgamal: 'ElGamal',
  eddsaLegacy: 'EdDSA',
  ed25519: 'Ed25519',
  ed448: 'Ed448',
  ecdsa: 'ECDSA',
};

/** The smallest RSA key openpgp accepts by default (its `minRSABits` is 2047). */
export const MIN_RSA_BITS = 2048;

/**
 * Describes the primary key of `key` (upstream's data dump key signs with its primary key, FEED.md,
 * Signatures) and says whether the verifier would refuse every signature by it: RSA under
 * {@link MIN_RSA_BITS} bits, DSA or ElGamal (openpgp's defaults).
 */
export function keyStrength(key: openpgp.PublicKey): KeyStrength {
  const info = key.getAlgorithmInfo() as { algorithm: string; bits?: number; curve?: string };
  const algorithm = NAMES[info.algorithm] ?? info.algorithm;
  const bits = info.bits ?? null;
  let weakness: string | null = null;
  if (algorithm === 'RSA' && bits !== null && bits < MIN_RSA_BITS) {
    weakness = `RSA key of ${bits} bits (under ${MIN_RSA_BITS})`;
  } else if (algorithm === 'DSA' || algorithm === 'ElGamal') {
    weakness = `${algorithm} key`;
  }
  return {
    fingerprint: key.getFingerprint().toUpperCase(),
    algorithm,
    bits,
    curve: info.curve ?? null,
    weakness,
  };
}

/** `RSA 4096 bits` / `EdDSA ed25519`. */
export function describeStrength(strength: KeyStrength): string {
  return `${strength.algorithm} ${strength.bits !== null ? `${strength.bits} bits` : (strength.curve ?? '')}`.trim();
}

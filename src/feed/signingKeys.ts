import { readFile } from 'node:fs/promises';
import * as openpgp from 'openpgp';
import { SigningKeyFileError } from './errors.js';

/** Upstream's documented data-dump signing key fingerprint (FEED.md, Signatures). */
export const UPSTREAM_FINGERPRINT = 'D5E63B4BDCCE195642948684B8FC2375C777580F';

/** The public keys archives are verified against, with their primary key fingerprints in the same order. */
export interface SigningKeys {
  keys: openpgp.PublicKey[];
  /** Primary key fingerprints, uppercase hex, 40 characters each. */
  fingerprints: string[];
  /**
   * Fingerprints of weak keys the operator let through (`--allow-weak-signing-key`): signatures
   * by them are checked without openpgp's key size, DSA/ElGamal and SHA-1 refusals.
   */
  weakAllowed?: ReadonlySet<string>;
  /**
   * Accept SHA-1 binary signatures by these keys (`--allow-sha1-signatures`): upstream's older
   * archives were signed by gpg 1.x with SHA-1 (FEED.md, Signatures), which openpgp refuses.
   */
  sha1Allowed?: boolean;
}

const ARMOR_BLOCK = /-----BEGIN PGP ([A-Z ]+?)-----[\s\S]*?-----END PGP \1-----/g;
const EXPORT_HINT = `fetch the public key and export it by its full fingerprint: \`gpg --recv-keys ${UPSTREAM_FINGERPRINT}\`, then \`gpg --export --armor ${UPSTREAM_FINGERPRINT} > upstream-key.asc\` (see the README, Integrity and reliability)`;

/**
 * Reads the public keys in `path`: one or more ASCII-armored blocks, each holding one or more keys
 * (FEED.md, Signatures: operators supply upstream's key as `gpg --export --armor <full fingerprint>`).
 * Copies of one key are merged into one entry.
 * @throws SigningKeyFileError naming the file when it cannot be read, is empty, holds no armored key, holds a
 *   block that is not a public key, or holds a secret key (refused so it is not kept around by
 *   mistake): the operator's file, so the CLI reports it as a configuration mistake (exit 2).
 */
export async function loadSigningKeys(path: string): Promise<SigningKeys> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new SigningKeyFileError(`signing key file ${path}: cannot read it (${errorMessage(err)})`, {
      cause: err,
    });
  }
  const blocks = [...text.matchAll(ARMOR_BLOCK)];
  if (text.trim() === '') throw new SigningKeyFileError(`signing key file ${path} is empty; ${EXPORT_HINT}`);
  if (blocks.length === 0) {
    throw new SigningKeyFileError(
      `signing key file ${path} holds no ASCII-armored OpenPGP key; ${EXPORT_HINT}`,
    );
  }
  const keys: openpgp.PublicKey[] = [];
  for (const [index, block] of blocks.entries()) {
    for (const key of await readKeyBlock(path, index + 1, block[1]!, block[0])) {
      const same = keys.findIndex((known) => known.getFingerprint() === key.getFingerprint());
      // Two copies of one key are merged, so a revocation carried by either copy is kept.
      if (same >= 0) keys[same] = await keys[same]!.update(key);
      else keys.push(key);
    }
  }
  return { keys, fingerprints: keys.map(fingerprintOf) };
}

/** Parses armored block number `index` (1-based) of key file `path`; `type` is its armor header type. */
async function readKeyBlock(path: string, index: number, type: string, armored: string) {
  const where = `signing key file ${path}, block ${index}`;
  if (type === 'PRIVATE KEY BLOCK') {
    throw new SigningKeyFileError(`${where} is a secret key, refused; ${EXPORT_HINT}`);
  }
  if (type !== 'PUBLIC KEY BLOCK')
    throw new SigningKeyFileError(`${where} is a PGP ${type}, not a public key`);
  let keys: openpgp.Key[];
  try {
    keys = await openpgp.readKeys({ armoredKeys: armored });
  } catch (err) {
    throw new SigningKeyFileError(`${where} is not a readable OpenPGP public key (${errorMessage(err)})`, {
      cause: err,
    });
  }
  // An armor header can lie: a public key block that carries secret key packets is refused too.
  if (keys.some((key) => key.isPrivate())) {
    throw new SigningKeyFileError(`${where} holds a secret key, refused; ${EXPORT_HINT}`);
  }
  return keys as openpgp.PublicKey[];
}

/** One log line per key: `<fingerprint> <first user ID>` (user ID `(no user ID)` when the key has none). */
export function describeKeys(keys: SigningKeys): string[] {
  return keys.keys.map((key) => `${fingerprintOf(key)} ${key.getUserIDs()[0] ?? '(no user ID)'}`);
}

/** True when `fingerprint` (any case, spaces allowed) is upstream's documented key (FEED.md, Signatures). */
export function isUpstreamKey(fingerprint: string): boolean {
  return fingerprint.replace(/\s+/g, '').toUpperCase() === UPSTREAM_FINGERPRINT;
}

/** Primary key fingerprint of `key`, uppercase hex (40 characters). */
export function fingerprintOf(key: openpgp.PublicKey): string {
  return key.getFingerprint().toUpperCase();
}

/** The message of an error, or the value as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGpgHome, type GpgHome } from './gpg.js';
import { run } from './processes.js';

/**
 * The committed test signing key (fixtures/keys/README.md) and signing with the real `gpg`, as
 * upstream signs its files (FEED.md, Signatures). Re-exported by archives.ts.
 */

/** The committed test signing key, public part (fixtures/keys/README.md). */
export const TEST_PUBLIC_KEY_FILE = fileURLToPath(
  new URL('../../fixtures/keys/test-signing-key.asc', import.meta.url),
);
/** The committed test signing key, secret part, without passphrase. TEST ONLY. */
export const TEST_SECRET_KEY_FILE = fileURLToPath(
  new URL('../../fixtures/keys/test-signing-key.secret.asc', import.meta.url),
);
/** Fingerprint of the committed test signing key. */
export const TEST_KEY_FINGERPRINT = '06140953A98E0572ADFCB13EE77A781303C31ACB';

/** Options of {@link signFile}. */
export interface SignOptions {
  /**
   * Signature creation time in epoch seconds (gpg `--faked-system-time`). Fixing it makes the
   * signature bytes reproducible (EdDSA signatures are deterministic). Must not precede the key's
   * creation (2026-01-01 for the test key). Default: now.
   */
  time?: number;
  /** Key to sign with (fingerprint); default gpg's default key of the home. */
  fingerprint?: string;
}

/**
 * Writes `path + '.asc'`: an ASCII-armored detached signature of `path` in binary mode, as upstream
 * makes them (`gpg --detach-sign --armor`, FEED.md, Signatures), with the secret key in `keyHome`
 * (a GnuPG home folder, or an object with its `dir`). Replaces an existing signature.
 * Resolves to the signature's path.
 * @throws Error with gpg's stderr when signing fails.
 */
export async function signFile(
  path: string,
  keyHome: string | { dir: string },
  options: SignOptions = {},
): Promise<string> {
  const home = typeof keyHome === 'string' ? keyHome : keyHome.dir;
  const out = `${path}.asc`;
  const time = options.time === undefined ? [] : ['--faked-system-time', `${Math.floor(options.time)}!`];
  const user = options.fingerprint ? ['--local-user', options.fingerprint] : [];
  await run({
    cmd: 'gpg',
    args: [
      '--homedir',
      home,
      '--batch',
      '--yes',
      ...time,
      ...user,
      '--detach-sign',
      '--armor',
      '--output',
      out,
      path,
    ],
  });
  return out;
}

/**
 * Writes `path + '.asc'` for each of `paths`: a well-formed signature by the key in `keyHome` over
 * other bytes, so one that can never verify (the bad-signature cases of the sync's tests). The
 * other bytes are written in `scratch` (a folder); nothing is signed when `paths` is empty.
 * @throws as {@link signFile}.
 */
export async function signOtherBytes(
  paths: readonly string[],
  keyHome: { dir: string; fingerprint: string },
  scratch: string,
): Promise<void> {
  if (paths.length === 0) return;
  const other = join(scratch, 'other.bin');
  await writeFile(other, 'not the archive');
  await signFile(other, keyHome, { fingerprint: keyHome.fingerprint });
  for (const path of paths) await copyFile(`${other}.asc`, `${path}.asc`);
}

/**
 * Checks `signatureFile` against `file` with `gpg --verify` and the keys in `keyHome`; resolves when
 * the signature is good.
 * @throws Error with gpg's output when it is bad, or made by a key the home does not hold.
 */
export async function verifyWithGpg(
  file: string,
  signatureFile: string,
  keyHome: string | { dir: string },
): Promise<void> {
  const home = typeof keyHome === 'string' ? keyHome : keyHome.dir;
  await run({ cmd: 'gpg', args: ['--homedir', home, '--batch', '--verify', signatureFile, file] });
}

/** A throwaway GnuPG home holding the committed test signing key. */
export interface TestKeyHome extends GpgHome {
  /** Fingerprint of the test key ({@link TEST_KEY_FINGERPRINT}). */
  fingerprint: string;
}

/**
 * Creates a fresh GnuPG home under a short path in the OS temp folder (gpg-agent socket paths have
 * a length limit) and imports the committed test key into it: the secret key by default, only the
 * public key with `{ secret: false }` (to check signatures against the committed public key alone).
 * Call `close()` when done: it stops the agent and deletes the folder.
 * @throws Error with gpg's output when the import fails.
 */
export async function createTestKeyHome(options: { secret?: boolean } = {}): Promise<TestKeyHome> {
  const home = await createGpgHome();
  try {
    await home.gpg(['--import', options.secret === false ? TEST_PUBLIC_KEY_FILE : TEST_SECRET_KEY_FILE]);
    return Object.assign(home, { fingerprint: TEST_KEY_FINGERPRINT });
  } catch (error) {
    await home.close();
    throw error;
  }
}

import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A throwaway GnuPG home driven through the real `gpg` binary, to sign fixtures exactly as upstream
 * does (`gpg --detach-sign --armor`, FEED.md, Signatures). Call {@link GpgHome.close} when done: it
 * stops the agent gpg started and deletes the directory.
 */
export interface GpgHome {
  dir: string;
  /** Runs gpg in this home with `--batch`; resolves to its stdout. */
  gpg(args: string[]): Promise<string>;
  /**
   * Generates a passphrase-less signing key (`algo` as `gpg --quick-gen-key` spells it, default
   * `ed25519`; `expire` default `never`); resolves to its fingerprint as gpg lists it (`fpr` record).
   */
  generateKey(
    userId: string,
    options?: { algo?: string; expire?: string; fakedTime?: string },
  ): Promise<string>;
  /** ASCII-armored public keys of `fingerprints`, one block, as `gpg --export --armor`. */
  exportPublic(...fingerprints: string[]): Promise<string>;
  /** ASCII-armored secret key of `fingerprint`, as `gpg --export-secret-keys --armor`. */
  exportSecret(fingerprint: string): Promise<string>;
  /** Armored detached signature of `file` by `fingerprint`: `gpg --detach-sign --armor` plus `extra`. */
  detachSign(fingerprint: string, file: string, extra?: string[]): Promise<string>;
  /** Revokes `fingerprint` by importing the revocation certificate gpg wrote when generating it. */
  revoke(fingerprint: string): Promise<void>;
  close(): Promise<void>;
}

/** Creates a GnuPG home under a short path in the OS temp dir (agent socket paths have a length limit). */
export async function createGpgHome(): Promise<GpgHome> {
  const dir = await mkdtemp(join(tmpdir(), 'lfgpg-'));
  const gpg = async (args: string[]) =>
    (await run('gpg', ['--homedir', dir, '--batch', '--yes', ...args], { maxBuffer: 1 << 26 })).stdout;
  return {
    dir,
    gpg,
    async generateKey(userId, { algo = 'ed25519', expire = 'never', fakedTime } = {}) {
      const time = fakedTime ? ['--faked-system-time', `${fakedTime}!`] : [];
      await gpg([...time, '--passphrase', '', '--quick-gen-key', userId, algo, 'sign', expire]);
      const colons = await gpg(['--with-colons', '--list-keys', `=${userId}`]);
      const fpr = colons.split('\n').find((line) => line.startsWith('fpr:'));
      if (!fpr) throw new Error(`gpg listed no fingerprint for ${userId}:\n${colons}`);
      return fpr.split(':')[9]!;
    },
    exportPublic: (...fingerprints) => gpg(['--export', '--armor', ...fingerprints]),
    exportSecret: (fingerprint) =>
      gpg([
        '--pinentry-mode',
        'loopback',
        '--passphrase',
        '',
        '--export-secret-keys',
        '--armor',
        fingerprint,
      ]),
    async detachSign(fingerprint, file, extra = []) {
      const out = `${file}.${fingerprint.slice(-8)}.asc`;
      await gpg(['--local-user', fingerprint, ...extra, '--detach-sign', '--armor', '--output', out, file]);
      return readFile(out, 'utf8');
    },
    async revoke(fingerprint) {
      const revocs = join(dir, 'openpgp-revocs.d');
      const name = (await readdir(revocs)).find((file) => file.startsWith(fingerprint));
      if (!name) throw new Error(`no revocation certificate for ${fingerprint} in ${revocs}`);
      // gpg prefixes the armor header with ':' so the stored certificate is not imported by mistake.
      const cert = (await readFile(join(revocs, name), 'utf8')).replace(/^:-----BEGIN/m, '-----BEGIN');
      const certFile = join(dir, `${fingerprint}.rev.asc`);
      await writeFile(certFile, cert);
      await gpg(['--import', certFile]);
    },
    async close() {
      // Fails only when no agent was ever started for this home, which leaves nothing to stop.
      await run('gpgconf', ['--homedir', dir, '--kill', 'all']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyStrength } from '../../src/feed/keyStrength.js';
import { verifyFileSignature } from '../../src/feed/signature.js';
import { loadSigningKeys } from '../../src/feed/signingKeys.js';
import { WeakSigningKeyError } from '../../src/sync/errors.js';
import { createVerifier, SignatureError } from '../../src/sync/verifier.js';
import { createGpgHome, type GpgHome } from '../support/gpg.js';
import { testLogger } from '../support/harness.js';

/**
 * Issue 11: the signing key is checked at start-up. Keys made by real gpg, files signed the way
 * upstream signs them (`gpg --detach-sign --armor`, FEED.md, Signatures), SHA-1 included.
 */

let gpg: GpgHome;
const fpr: Record<'rsa1024' | 'dsa1024' | 'rsa2048' | 'rsa4096', string> = {
  rsa1024: '',
  dsa1024: '',
  rsa2048: '',
  rsa4096: '',
};
const keyFile: Partial<Record<keyof typeof fpr, string>> = {};
let data: string;

beforeAll(async () => {
  gpg = await createGpgHome();
  // One home and one key of each kind for the whole file: RSA-4096 generation takes seconds.
  for (const algo of Object.keys(fpr) as (keyof typeof fpr)[]) {
    fpr[algo] = await gpg.generateKey(`Test ${algo} <${algo}@livefeed.test>`, { algo });
    keyFile[algo] = join(gpg.dir, `${algo}.asc`);
    await writeFile(keyFile[algo]!, await gpg.exportPublic(fpr[algo]));
  }
  data = join(gpg.dir, 'area.tar.xz');
  await writeFile(data, Buffer.from('pretend archive bytes\n\u0000\u00ff'));
}, 120_000);
afterAll(() => gpg?.close());

async function sign(algo: keyof typeof fpr, extra: string[] = []): Promise<string> {
  return gpg.detachSign(fpr[algo], data, extra);
}

describe('the signing key at start-up', () => {
  it('names fingerprint, algorithm and size of each key, and which the verifier would refuse', async () => {
    const strength = async (algo: keyof typeof fpr) =>
      keyStrength((await loadSigningKeys(keyFile[algo]!)).keys[0]!);
    expect(await strength('rsa4096')).toMatchObject({
      fingerprint: fpr.rsa4096,
      algorithm: 'RSA',
      bits: 4096,
      weakness: null,
    });
    expect(await strength('rsa2048')).toMatchObject({ algorithm: 'RSA', bits: 2048, weakness: null });
    expect(await strength('rsa1024')).toMatchObject({
      algorithm: 'RSA',
      bits: 1024,
      weakness: 'RSA key of 1024 bits (under 2048)',
    });
    expect(await strength('dsa1024')).toMatchObject({ algorithm: 'DSA', bits: 1024, weakness: 'DSA key' });
  });

  it('logs the key and verifies an RSA-4096 signature', async () => {
    const lines: string[] = [];
    const verifier = await createVerifier(keyFile.rsa4096, 'fail', testLogger(lines));
    expect(lines.join('\n')).toContain(`signing key ${fpr.rsa4096}: RSA 4096 bits`);
    expect(await verifier.check(data, 'area.tar.xz', await sign('rsa4096'))).toMatchObject({
      status: 'VERIFIED',
      fingerprint: fpr.rsa4096,
    });
  });

  for (const algo of ['rsa1024', 'dsa1024'] as const) {
    it(`stops on a ${algo} key, naming --allow-weak-signing-key; the flag lets it through, logged once`, async () => {
      const refused = createVerifier(keyFile[algo], 'fail', testLogger());
      await expect(refused).rejects.toThrow(WeakSigningKeyError);
      await expect(refused).rejects.toThrow(new RegExp(`${fpr[algo]}.*--allow-weak-signing-key`));
      // Without the flag openpgp refuses the signature too: the check at start-up is not stricter than the verifier.
      const keys = await loadSigningKeys(keyFile[algo]!);
      expect(await verifyFileSignature(data, await sign(algo), keys)).toMatchObject({
        status: 'INVALID',
        kind: 'refused-algorithm',
      });

      const lines: string[] = [];
      const verifier = await createVerifier(keyFile[algo], 'fail', testLogger(lines), {
        allowWeakSigningKey: true,
      });
      expect(await verifier.check(data, 'area.tar.xz', await sign(algo))).toMatchObject({
        status: 'VERIFIED',
      });
      // SHA-1 signatures by the key let through pass too (gpg 1.x era archives).
      const sha1 = await sign(algo, ['--digest-algo', 'SHA1']);
      expect(await verifier.check(data, 'area.tar.xz', sha1)).toMatchObject({ status: 'VERIFIED' });
      expect(lines.filter((l) => l.includes('"weak-signing-key-allowed"'))).toHaveLength(1);
    });
  }

  it('refuses a SHA-1 signature by a strong key as a refused algorithm (deterministic)', async () => {
    const verifier = await createVerifier(keyFile.rsa2048, 'fail', testLogger());
    expect(await verifier.check(data, 'area.tar.xz', await sign('rsa2048'))).toMatchObject({
      status: 'VERIFIED',
    });
    const error = await verifier
      .check(data, 'area.tar.xz', await sign('rsa2048', ['--digest-algo', 'SHA1']))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignatureError);
    expect(error).toMatchObject({ kind: 'refused-algorithm', transient: false, file: 'area.tar.xz' });
    expect((error as Error).message).toMatch(/uses SHA-1.*pass --allow-sha1-signatures/);
  });

  it('--allow-sha1-signatures accepts SHA-1 signatures by the strong key (logged once) and nothing more', async () => {
    const lines: string[] = [];
    const verifier = await createVerifier(keyFile.rsa2048, 'fail', testLogger(lines), {
      allowSha1Signatures: true,
    });
    const sha1 = await sign('rsa2048', ['--digest-algo', 'SHA1']);
    expect(sha1).not.toBe(await sign('rsa2048'));
    for (let i = 0; i < 2; i++) {
      expect(await verifier.check(data, 'area.tar.xz', sha1)).toMatchObject({
        status: 'VERIFIED',
        fingerprint: fpr.rsa2048,
      });
    }
    expect(lines.filter((l) => l.includes('"sha1-signatures-allowed"'))).toHaveLength(1);
    // A tampered file, another key and a weak key stay refused.
    const tampered = join(gpg.dir, 'tampered');
    await writeFile(tampered, 'pretend archive bytes, changed\n');
    await expect(verifier.check(tampered, 'x', sha1)).rejects.toMatchObject({ kind: 'mismatch' });
    const byOther = await sign('rsa4096', ['--digest-algo', 'SHA1']);
    await expect(verifier.check(data, 'x', byOther)).rejects.toMatchObject({ kind: 'unknown-key' });
    await expect(
      createVerifier(keyFile.rsa1024, 'fail', testLogger(), { allowSha1Signatures: true }),
    ).rejects.toThrow(WeakSigningKeyError);
  });

  it('tells an unknown key and a mismatch apart from a cut signature', async () => {
    const verifier = await createVerifier(keyFile.rsa2048, 'fail', testLogger());
    const byOther = await sign('rsa4096');
    await expect(verifier.check(data, 'x', byOther)).rejects.toMatchObject({
      kind: 'unknown-key',
      transient: false,
    });
    const other = join(gpg.dir, 'other');
    await writeFile(other, 'other bytes');
    const forOther = await gpg.detachSign(fpr.rsa2048, other);
    await expect(verifier.check(data, 'x', forOther)).rejects.toMatchObject({
      kind: 'mismatch',
      transient: false,
    });
    const good = await sign('rsa2048');
    await expect(verifier.check(data, 'x', good.slice(0, good.length / 2))).rejects.toMatchObject({
      kind: 'malformed',
      transient: true,
    });
  });
});

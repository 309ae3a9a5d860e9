import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyFileSignature } from '../../src/feed/signature.js';
import {
  describeKeys,
  isUpstreamKey,
  loadSigningKeys,
  type SigningKeys,
  UPSTREAM_FINGERPRINT,
} from '../../src/feed/signingKeys.js';
import { createGpgHome, type GpgHome } from '../support/gpg.js';

const RSA_UID = 'Test Dumps <dumps@example.org>';
const OTHER_UID = 'Someone Else <else@example.org>';

let home: GpgHome;
let rsaFpr: string;
let otherFpr: string;
let rsaKeys: SigningKeys;
/** Archive-like bytes: CR, LF, CRLF, NUL and high bytes, so text mode would change what is hashed. */
let archive: string;

async function fixture(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(home.dir, name);
  await writeFile(path, content);
  return path;
}

/** Writes `armored` to a key file and loads it. */
async function keysFrom(name: string, armored: string): Promise<SigningKeys> {
  return loadSigningKeys(await fixture(name, armored));
}

beforeAll(async () => {
  home = await createGpgHome();
  // One RSA key, gpg's classic signing algorithm; the others are ed25519, which gpg generates instantly.
  rsaFpr = await home.generateKey(RSA_UID, { algo: 'rsa3072' });
  otherFpr = await home.generateKey(OTHER_UID);
  rsaKeys = await keysFrom('rsa.asc', await home.exportPublic(rsaFpr));
  archive = await fixture(
    'archive.bin',
    Buffer.concat([Buffer.from('line\r\nline\nline\r\0\xff'), randomBytes(4096)]),
  );
});

afterAll(async () => {
  await home?.close();
});

describe('loadSigningKeys', () => {
  it('loads a key exported with gpg --export --armor, with the fingerprint gpg lists', async () => {
    expect(rsaKeys.fingerprints).toEqual([rsaFpr]);
    expect(rsaKeys.fingerprints[0]).toMatch(/^[0-9A-F]{40}$/);
    expect(rsaKeys.keys).toHaveLength(1);
  });

  it('loads every key of a file holding several blocks, and of one block holding several keys', async () => {
    const [rsa, other] = [await home.exportPublic(rsaFpr), await home.exportPublic(otherFpr)];
    expect((await keysFrom('two-blocks.asc', `${rsa}\n${other}`)).fingerprints).toEqual([rsaFpr, otherFpr]);
    const oneBlock = await keysFrom('one-block.asc', await home.exportPublic(rsaFpr, otherFpr));
    expect(oneBlock.fingerprints.sort()).toEqual([rsaFpr, otherFpr].sort());
  });

  it('throws naming the file when it is missing, empty, not a key, or a secret key', async () => {
    const missing = join(home.dir, 'missing.asc');
    await expect(loadSigningKeys(missing)).rejects.toThrow(`signing key file ${missing}: cannot read it`);
    const empty = await fixture('empty.asc', '\n');
    await expect(loadSigningKeys(empty)).rejects.toThrow(`signing key file ${empty} is empty`);
    const text = await fixture('text.asc', 'not a key\n');
    await expect(loadSigningKeys(text)).rejects.toThrow(`${text} holds no ASCII-armored OpenPGP key`);
    const signature = await fixture('sig.asc', await home.detachSign(rsaFpr, archive));
    await expect(loadSigningKeys(signature)).rejects.toThrow(`${signature}, block 1 is a PGP SIGNATURE`);
    const secret = await fixture('secret.asc', await home.exportSecret(otherFpr));
    await expect(loadSigningKeys(secret)).rejects.toThrow(`${secret}, block 1 is a secret key`);
  });

  it('throws naming the file when an armored public key block is corrupt', async () => {
    const armored = await home.exportPublic(otherFpr);
    const corrupt = await fixture(
      'corrupt.asc',
      armored.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA'),
    );
    await expect(loadSigningKeys(corrupt)).rejects.toThrow(`${corrupt}, block 1 is not a readable`);
  });
});

describe('verifyFileSignature', () => {
  it('verifies a gpg --detach-sign --armor signature over binary data and names the key', async () => {
    const result = await verifyFileSignature(archive, await home.detachSign(rsaFpr, archive), rsaKeys);
    expect(result).toEqual({ status: 'VERIFIED', fingerprint: rsaFpr });
  });

  it('checks the bytes as binary: the same file with LF line endings does not verify', async () => {
    const signature = await home.detachSign(rsaFpr, archive);
    const lf = (await readFile(archive)).toString('latin1').replaceAll('\r\n', '\n');
    const result = await verifyFileSignature(
      await fixture('lf.bin', Buffer.from(lf, 'latin1')),
      signature,
      rsaKeys,
    );
    expect(result).toEqual({ status: 'INVALID', reason: 'file does not match signature', kind: 'mismatch' });
  });

  it('refuses a text-mode signature', async () => {
    const signature = await home.detachSign(rsaFpr, archive, ['--textmode']);
    const result = await verifyFileSignature(archive, signature, rsaKeys);
    expect(result.status).toBe('INVALID');
    expect(result.reason).toMatch(/text mode/);
  });

  it('ignores a text-mode signature next to a binary one, so line-ending changes are still caught', async () => {
    const [binary, text] = await Promise.all([
      openpgp.readSignature({ armoredSignature: await home.detachSign(rsaFpr, archive) }),
      openpgp.readSignature({ armoredSignature: await home.detachSign(rsaFpr, archive, ['--textmode']) }),
    ]);
    const both = new openpgp.PacketList<openpgp.SignaturePacket>();
    both.push(...binary.packets, ...text.packets);
    const armored = new openpgp.Signature(both).armor();
    expect((await verifyFileSignature(archive, armored, rsaKeys)).status).toBe('VERIFIED');
    const lf = (await readFile(archive)).toString('latin1').replaceAll('\r\n', '\n');
    const result = await verifyFileSignature(
      await fixture('lf2.bin', Buffer.from(lf, 'latin1')),
      armored,
      rsaKeys,
    );
    expect(result).toEqual({ status: 'INVALID', reason: 'file does not match signature', kind: 'mismatch' });
  });

  it('verifies a signature made by two signers when only one key is configured', async () => {
    const signature = await home.detachSign(otherFpr, archive, ['--local-user', rsaFpr]);
    expect((await openpgp.readSignature({ armoredSignature: signature })).packets).toHaveLength(2);
    expect(await verifyFileSignature(archive, signature, rsaKeys)).toEqual({
      status: 'VERIFIED',
      fingerprint: rsaFpr,
    });
  });

  it('reports a tampered file (one byte changed) as INVALID', async () => {
    const signature = await home.detachSign(rsaFpr, archive);
    const bytes = await readFile(archive);
    bytes[10] = bytes[10]! ^ 0x01;
    const result = await verifyFileSignature(await fixture('tampered.bin', bytes), signature, rsaKeys);
    expect(result).toEqual({ status: 'INVALID', reason: 'file does not match signature', kind: 'mismatch' });
  });

  it('streams files larger than one read chunk, up to the last byte', async () => {
    const big = await fixture('big.bin', randomBytes(5 * 1024 * 1024 + 7));
    const signature = await home.detachSign(rsaFpr, big);
    expect((await verifyFileSignature(big, signature, rsaKeys)).status).toBe('VERIFIED');
    const bytes = await readFile(big);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x80;
    const result = await verifyFileSignature(await fixture('big-tampered.bin', bytes), signature, rsaKeys);
    expect(result.reason).toBe('file does not match signature');
  });

  it('answers the same from memory, streamed, and streamed after a head held in memory, from a path or a stream', async () => {
    const signature = await home.detachSign(rsaFpr, archive);
    const bytes = await readFile(archive);
    bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0x01;
    const tampered = await fixture('tampered-tail.bin', bytes);
    // The 4 KB archive: all in memory (default), streamed from the first byte (0), 1,000 bytes then streamed.
    for (const inMemoryBytes of [undefined, 0, 1000]) {
      for (const source of [
        (path: string) => path,
        (path: string) => createReadStream(path, { highWaterMark: 512 }),
      ]) {
        const what = `inMemoryBytes ${inMemoryBytes}, ${typeof source(archive)}`;
        expect(
          await verifyFileSignature(source(archive), signature, rsaKeys, undefined, { inMemoryBytes }),
          what,
        ).toEqual({
          status: 'VERIFIED',
          fingerprint: rsaFpr,
        });
        expect(
          await verifyFileSignature(source(tampered), signature, rsaKeys, undefined, { inMemoryBytes }),
          what,
        ).toEqual({
          status: 'INVALID',
          reason: 'file does not match signature',
          kind: 'mismatch',
        });
      }
    }
  });

  it('reports a signature by a key outside the set, naming its key ID and fingerprint', async () => {
    const result = await verifyFileSignature(archive, await home.detachSign(otherFpr, archive), rsaKeys);
    expect(result.status).toBe('INVALID');
    expect(result.reason).toBe(`signature by unknown key 0x${otherFpr.slice(-16)} (fingerprint ${otherFpr})`);
  });

  it('verifies a signature by the second key of a two-key file', async () => {
    const armored = `${await home.exportPublic(rsaFpr)}\n${await home.exportPublic(otherFpr)}`;
    const keys = await keysFrom('both.asc', armored);
    const result = await verifyFileSignature(archive, await home.detachSign(otherFpr, archive), keys);
    expect(result).toEqual({ status: 'VERIFIED', fingerprint: otherFpr });
  });

  it('reports a malformed .asc as not an OpenPGP signature', async () => {
    const cases = [
      'garbage',
      '',
      // A body line lost: the armor still parses, the packet inside does not.
      (await home.detachSign(rsaFpr, archive))
        .split('\n')
        .filter((_, line) => line !== 3)
        .join('\n'),
      await home.exportPublic(rsaFpr),
    ];
    for (const armored of cases) {
      const result = await verifyFileSignature(archive, armored, rsaKeys);
      expect(result.status, armored).toBe('INVALID');
      expect(result.reason, armored).toMatch(/^not an OpenPGP signature \(.+\)$/);
    }
  });

  it('reports a signature by a revoked key, also when the file holds an unrevoked copy too', async () => {
    const fpr = await home.generateKey('Revoked <revoked@example.org>');
    const signature = await home.detachSign(fpr, archive);
    const before = await home.exportPublic(fpr);
    await home.revoke(fpr);
    const after = await home.exportPublic(fpr);
    for (const armored of [after, `${before}\n${after}`]) {
      const result = await verifyFileSignature(archive, signature, await keysFrom('revoked.asc', armored));
      expect(result.status).toBe('INVALID');
      expect(result.reason).toMatch(new RegExp(`^signing key 0x${fpr.slice(-16)} is revoked`));
    }
  });

  it('verifies a signature made while the key was valid, though the key has expired since', async () => {
    const fpr = await home.generateKey('Expired <expired@example.org>', {
      expire: '1d',
      fakedTime: '20200101T000000',
    });
    const signature = await home.detachSign(fpr, archive, ['--faked-system-time', '20200101T120000!']);
    const keys = await keysFrom('expired.asc', await home.exportPublic(fpr));
    expect(await verifyFileSignature(archive, signature, keys)).toEqual({
      status: 'VERIFIED',
      fingerprint: fpr,
    });
  });

  it('tolerates a signature dated minutes ahead of the local clock, not days', async () => {
    const at = (minutes: number) =>
      new Date(Date.now() + minutes * 60_000).toISOString().replace(/[-:]|\.\d+Z/g, '');
    const soon = await home.detachSign(rsaFpr, archive, ['--faked-system-time', `${at(10)}!`]);
    expect((await verifyFileSignature(archive, soon, rsaKeys)).status).toBe('VERIFIED');
    const later = await home.detachSign(rsaFpr, archive, ['--faked-system-time', `${at(2 * 24 * 60)}!`]);
    const result = await verifyFileSignature(archive, later, rsaKeys);
    expect(result.status).toBe('INVALID');
    expect(result.reason).toMatch(/dated in the future; check the system clock/);
  });

  it('throws naming the file when it cannot be opened', async () => {
    const missing = join(home.dir, 'missing.bin');
    const signature = await home.detachSign(rsaFpr, archive);
    await expect(verifyFileSignature(missing, signature, rsaKeys)).rejects.toThrow(
      `signature check of ${missing}: cannot open the file`,
    );
  });

  it('rejects with the abort reason when the signal is aborted', async () => {
    const signature = await home.detachSign(rsaFpr, archive);
    const controller = new AbortController();
    controller.abort();
    await expect(verifyFileSignature(archive, signature, rsaKeys, controller.signal)).rejects.toThrow(
      /aborted/i,
    );
  });
});

describe('describeKeys and isUpstreamKey', () => {
  it('describes each key by fingerprint and user ID', () => {
    expect(describeKeys(rsaKeys)).toEqual([`${rsaFpr} ${RSA_UID}`]);
  });

  it('recognises only upstream documented fingerprint, in any case and spacing', () => {
    expect(isUpstreamKey(UPSTREAM_FINGERPRINT)).toBe(true);
    expect(isUpstreamKey('d5e6 3b4b dcce 1956 4294  8684 b8fc 2375 c777 580f')).toBe(true);
    expect(isUpstreamKey(rsaFpr)).toBe(false);
  });
});

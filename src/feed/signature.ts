import { open } from 'node:fs/promises';
import { addAbortSignal, Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import * as openpgp from 'openpgp';
import { errorMessage, fingerprintOf, type SigningKeys } from './signingKeys.js';

/**
 * What livefeed knows about a feed file's detached signature (issue 4):
 * `VERIFIED` checked against a configured key, `UNVERIFIED` no key configured (or verification off),
 * `INVALID` the check failed, `MISSING` upstream served no `.asc`.
 */
export type SignatureStatus = 'VERIFIED' | 'UNVERIFIED' | 'INVALID' | 'MISSING';

/**
 * How a sync treats signatures (`--verify`): `fail` refuses an archive whose signature is INVALID
 * or MISSING, `warn` stores it and logs, `off` does not check (FEED.md, Signatures).
 */
export type VerifyMode = 'fail' | 'warn' | 'off';

/**
 * Why a signature did not verify. `malformed`: not a readable OpenPGP signature (a cut `.asc`:
 * fetch again). `mismatch`: well-formed but the file does not match it. `unknown-key`: by a key not
 * configured. `refused-algorithm`: a key or digest the verifier refuses (RSA under 2048 bits, DSA,
 * ElGamal, SHA-1, text mode). `key-rejected`: the key is revoked or expired, or the signature is
 * dated in the future. All but `malformed` are deterministic: the same bytes fail the same way.
 */
export type SignatureFailureKind =
  | 'malformed'
  | 'mismatch'
  | 'unknown-key'
  | 'refused-algorithm'
  | 'key-rejected';

/** Outcome of {@link verifyFileSignature}. A bad signature is a result, never an exception. */
export interface VerifyResult {
  status: 'VERIFIED' | 'INVALID';
  /** Primary key fingerprint (uppercase hex) of the key that verified the file; set when `VERIFIED`. */
  fingerprint?: string;
  /** Why the check failed, human readable (e.g. `file does not match signature`); set when `INVALID`. */
  reason?: string;
  /** Which kind of failure; set when `INVALID`. */
  kind?: SignatureFailureKind;
}

/**
 * How far in the future a signature may be dated: upstream signs a packet minutes before it is
 * fetched, so a host clock slightly behind upstream's would otherwise reject every fresh packet.
 */
const CLOCK_SKEW_MS = 60 * 60 * 1000;
/**
 * Files up to this many bytes are checked from memory, larger ones streamed. openpgp's streamed
 * check (web streams) costs 2–3 ms more per file than the same check of the bytes in memory (a
 * 2 KB dump 3.1–4.6 against 1.1–1.5 ms: bench/RESULTS.md, issue 16), most of a small dump's cost;
 * a day of catch-up checks 288 files, most of them small.
 */
export const IN_MEMORY_CHECK_BYTES = 4 << 20;
/**
 * Verifies the detached signature `armoredSignature` (the `.asc` upstream makes with
 * `gpg --detach-sign --armor`, FEED.md, Signatures) over the bytes of `filePath`, read as binary
 * data (no line-ending normalisation): in memory up to {@link IN_MEMORY_CHECK_BYTES}
 * (`options.inMemoryBytes`), streamed beyond, so memory does not grow with the file size.
 * Text-mode signatures are refused: they would let line-ending changes pass unnoticed.
 * Returns `INVALID` with a reason for a tampered file, a signature by a key not in `keys`, a
 * malformed or text-mode signature, a revoked key, a key that had expired when it signed, a
 * signature dated over an hour in the future, or an algorithm openpgp rejects by default (DSA,
 * SHA-1). A key that expired after signing still verifies, as with gpg. `file` is a path, or a
 * stream of the file's bytes (read to its end, e.g. a download as it arrives: issue 16).
 * @throws Error naming the file when it cannot be opened or read; `signal.reason` when aborted.
 */
export async function verifyFileSignature(
  file: string | Readable,
  armoredSignature: string,
  keys: SigningKeys,
  signal?: AbortSignal,
  options: { inMemoryBytes?: number } = {},
): Promise<VerifyResult> {
  signal?.throwIfAborted();
  const signature = await parseSignature(armoredSignature);
  if (typeof signature === 'string') return invalid(signature, 'malformed');
  const packets = signature.packets.filter(
    (packet) => packet.signatureType === openpgp.enums.signature.binary,
  );
  if (packets.length === 0) return invalid(describeNonBinary(signature.packets), 'refused-algorithm');
  const signed = packets.filter((packet) => signingKeyFor(keys, packet.issuerKeyID));
  if (signed.length === 0) return invalid(unknownKeyReason(packets[0]!), 'unknown-key');
  // Only binary signatures by known keys go on: a text-mode one next to them must not count.
  const list = new openpgp.PacketList<openpgp.SignaturePacket>();
  list.push(...signed);
  const inMemoryBytes = options.inMemoryBytes ?? IN_MEMORY_CHECK_BYTES;
  const results = await hashFile(file, new openpgp.Signature(list), keys, signal, inMemoryBytes);
  let firstFailure: VerifyResult | undefined;
  for (const result of results) {
    const key = signingKeyFor(keys, result.keyID);
    if (!key) continue;
    try {
      await result.verified;
      return { status: 'VERIFIED', fingerprint: fingerprintOf(key) };
    } catch (err) {
      firstFailure ??= explainFailure(err, result.keyID);
    }
  }
  return firstFailure ?? invalid('no signature by a known key could be checked', 'unknown-key');
}

/** openpgp's settings without its refusals of weak keys and SHA-1 (for a key let through by the operator). */
const WEAK_KEY_CONFIG = {
  minRSABits: 512,
  rejectPublicKeyAlgorithms: new Set<openpgp.enums.publicKey>(),
  rejectHashAlgorithms: new Set([openpgp.enums.hash.md5, openpgp.enums.hash.ripemd]),
  rejectMessageHashAlgorithms: new Set([openpgp.enums.hash.md5, openpgp.enums.hash.ripemd]),
};

/** openpgp's settings without its refusal of SHA-1 message digests (`--allow-sha1-signatures`). */
const SHA1_CONFIG = { rejectMessageHashAlgorithms: WEAK_KEY_CONFIG.rejectMessageHashAlgorithms };

/**
 * The relaxed openpgp settings when every signature packet is by a key the operator let through,
 * or SHA-1 allowed for the strong keys; openpgp's defaults otherwise.
 */
function configFor(keys: SigningKeys, signature: openpgp.Signature): Partial<openpgp.Config> | undefined {
  const weak =
    !!keys.weakAllowed?.size &&
    signature.packets.every((packet) => {
      const key = signingKeyFor(keys, packet.issuerKeyID);
      return key !== undefined && keys.weakAllowed!.has(fingerprintOf(key));
    });
  if (weak) return WEAK_KEY_CONFIG;
  return keys.sha1Allowed ? SHA1_CONFIG : undefined;
}

/** The signature, or a reason string when `armored` is not an OpenPGP signature. */
async function parseSignature(armored: string): Promise<openpgp.Signature | string> {
  try {
    const signature = await openpgp.readSignature({ armoredSignature: armored });
    if (signature.packets.length === 0) return 'not an OpenPGP signature (no signature packet)';
    return signature;
  } catch (err) {
    return `not an OpenPGP signature (${errorMessage(err)})`;
  }
}

/** A stream of the file at `file` (a path), or `file` itself (a stream of its bytes). */
async function openBytes(file: string | Readable): Promise<Readable> {
  if (typeof file !== 'string') return file;
  const handle = await open(file, 'r').catch((err: unknown) => {
    throw new Error(`signature check of ${file}: cannot open the file (${errorMessage(err)})`, {
      cause: err,
    });
  });
  return handle.createReadStream({ highWaterMark: 1 << 20 });
}

/**
 * Streams `file` through openpgp and returns one verification per signature packet, their
 * `verified` promises settled: openpgp hashes while the data is read, so the data is drained here.
 */
async function hashFile(
  file: string | Readable,
  signature: openpgp.Signature,
  keys: SigningKeys,
  signal: AbortSignal | undefined,
  inMemoryBytes: number,
) {
  const filePath = typeof file === 'string' ? file : 'the download';
  const source = await openBytes(file);
  if (signal) addAbortSignal(signal, source);
  try {
    const head = await readHead(source, inMemoryBytes);
    // openpgp v6 takes web streams only; its node stream detection throws on a node Readable.
    const binary = head.ended
      ? Buffer.concat(head.chunks)
      : (Readable.toWeb(continued(head.chunks, source)) as ReadableStream<Uint8Array>);
    const message = await openpgp.createMessage({ binary });
    const { data, signatures } = await openpgp.verify({
      message,
      signature,
      verificationKeys: keys.keys,
      format: 'binary',
      date: new Date(Date.now() + CLOCK_SKEW_MS),
      config: configFor(keys, signature),
    });
    if (!head.ended) await drain(data as ReadableStream<Uint8Array>);
    await Promise.allSettled(signatures.map((result) => result.verified));
    return signatures;
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw new Error(`signature check of ${filePath}: reading the file failed (${errorMessage(err)})`, {
      cause: err,
    });
  } finally {
    source.destroy();
  }
}

/**
 * The chunks of `source` until it ended (`ended`) or more than `limit` bytes came (then the rest is
 * still to read: the stream stays open).
 */
async function readHead(source: Readable, limit: number): Promise<{ chunks: Buffer[]; ended: boolean }> {
  const chunks: Buffer[] = [];
  if (limit <= 0) return { chunks, ended: false };
  let bytes = 0;
  for await (const chunk of source.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes > limit) return { chunks, ended: false };
  }
  return { chunks, ended: true };
}

/** The chunks of `head`, then the rest of `source`, as one stream. */
function continued(head: Buffer[], source: Readable): Readable {
  return Readable.from(
    (async function* () {
      yield* head;
      yield* source;
    })(),
    { objectMode: false },
  );
}

/** Reads `stream` to its end, discarding the chunks. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  const reader = stream.getReader();
  while (!(await reader.read()).done) {
    // Nothing to keep: the digest is computed from a clone of this stream.
  }
}

/** The configured key (primary or subkey owner) whose key ID is `keyID`, if any. */
function signingKeyFor(keys: SigningKeys, keyID: openpgp.KeyID): openpgp.PublicKey | undefined {
  return keys.keys.find((key) => key.getKeys(keyID).length > 0);
}

function unknownKeyReason(packet: openpgp.SignaturePacket): string {
  // issuerFingerprint is parsed by openpgp (subpacket 33, gpg always writes it) but not in its types.
  const issuer = (packet as { issuerFingerprint?: Uint8Array | null }).issuerFingerprint;
  const fingerprint = issuer ? ` (fingerprint ${Buffer.from(issuer).toString('hex').toUpperCase()})` : '';
  return `signature by unknown key 0x${packet.issuerKeyID.toHex().toUpperCase()}${fingerprint}`;
}

function describeNonBinary(packets: openpgp.SignaturePacket[]): string {
  const types = packets.map((packet) => `0x${(packet.signatureType ?? 0).toString(16).padStart(2, '0')}`);
  if (packets.some((packet) => packet.signatureType === openpgp.enums.signature.text)) {
    return 'signature is in text mode (type 0x01); archives must be signed in binary mode';
  }
  return `not a signature over a file (signature type ${types.join(', ')})`;
}

/** Maps openpgp's verification errors to the reasons (and kinds) livefeed reports. */
function explainFailure(err: unknown, keyID: openpgp.KeyID): VerifyResult {
  const message = errorMessage(err);
  const key = `0x${keyID.toHex().toUpperCase()}`;
  if (/Signed digest did not match|Signature verification failed/.test(message)) {
    return invalid('file does not match signature', 'mismatch');
  }
  if (/creation time is in the future/.test(message)) {
    return invalid(
      `signature by ${key} is dated in the future; check the system clock (${message})`,
      'key-rejected',
    );
  }
  if (/revoked/i.test(message)) return invalid(`signing key ${key} is revoked (${message})`, 'key-rejected');
  if (/expired/i.test(message)) {
    return invalid(`signing key ${key} or its signature has expired (${message})`, 'key-rejected');
  }
  if (/Insecure message hash algorithm: SHA1/i.test(message)) {
    return invalid(
      `signature by ${key} uses SHA-1, as upstream's older archives signed by gpg 1.x do; ` +
        'pass --allow-sha1-signatures to accept them (README, Integrity and reliability)',
      'refused-algorithm',
    );
  }
  if (/Insecure|algorithm|RSA keys shorter|bits/i.test(message)) {
    return invalid(`signature by ${key} uses a refused algorithm (${message})`, 'refused-algorithm');
  }
  return invalid(`signature by ${key} does not verify (${message})`, 'mismatch');
}

function invalid(reason: string, kind: SignatureFailureKind): VerifyResult {
  return { status: 'INVALID', reason, kind };
}

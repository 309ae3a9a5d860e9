import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FeedClient } from '../feed/client.js';
import type { EntityType } from '../feed/entities.js';
import { fullDumpArchivePath, fullDumpSumsPath, listedSha256 } from '../feed/fullDumps.js';
import { signaturePath } from '../feed/protocol/urls.js';
import type { Logger } from '../logger.js';
import { SignatureError, type Verdict, type Verifier } from './verifier.js';

/** What {@link verdictFromSums} needs: the dumps' client, the verifier and the log. */
export interface SumsCheck {
  dumps: FeedClient;
  verifier: Verifier;
  logger: Logger;
  signal?: AbortSignal;
}

/**
 * The verdict on a full dump archive that has no `.asc`, from its directory's signed `SHA256SUMS`
 * (FEED.md: upstream publishes an archive without its `.asc` when signing fails; each full dump
 * directory holds `SHA256SUMS` and its `.asc`). The list's signature is checked like an archive's,
 * then the archive's SHA-256 (the download's, else read from the kept file) must be the one it lists.
 * @returns VERIFIED (the list's key) when the list vouches for the archive; INVALID (`--verify
 *   warn`, logged) when it lists another hash; undefined when the list or its `.asc` is missing
 *   too, it does not list the archive, or (`--verify warn`) its signature failed: the archive's own
 *   verdict (MISSING) then stands.
 * @throws SignatureError (fail mode) when the list's signature fails or it lists another hash
 *   (INVALID); the feed client's errors.
 */
export async function verdictFromSums(
  check: SumsCheck,
  dump: string,
  entity: EntityType,
  kept: { path: string; sha256?: string },
): Promise<Verdict | undefined> {
  const { dumps, verifier, signal } = check;
  const sumsName = fullDumpSumsPath(dump);
  const sums = await dumps.text(sumsName, signal);
  const signature = sums === null ? null : await dumps.text(signaturePath(sumsName), signal);
  if (sums === null || signature === null) return undefined;
  const listVerdict = await verifier.check(Readable.from([Buffer.from(sums)]), sumsName, signature, signal);
  const expected = listedSha256(sums, `${entity}.tar.xz`);
  if (listVerdict.status !== 'VERIFIED' || expected === undefined) return undefined;
  const actual = kept.sha256 ?? (await sha256Of(kept.path, signal));
  if (expected === actual)
    return {
      ...listVerdict,
      reason: `no .asc; its SHA-256 is the one ${sumsName} lists, whose signature verified`,
    };
  const name = fullDumpArchivePath(dump, entity);
  const reason = `no .asc, and its SHA-256 ${actual} is not the ${expected} that ${sumsName} lists`;
  if (verifier.mode === 'fail')
    throw new SignatureError(`signature of ${name} is INVALID: ${reason}`, 'mismatch', name);
  check.logger.warn({ event: 'signature-warning', file: name, status: 'INVALID' }, `${name}: ${reason}`);
  return { status: 'INVALID', fingerprint: null, reason, kind: 'mismatch' };
}

/** SHA-256 (lowercase hex) of the file at `path`, streamed. */
async function sha256Of(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash, { signal });
  return hash.digest('hex');
}

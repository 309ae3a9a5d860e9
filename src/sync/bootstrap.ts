import { rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BootstrapContinuation } from '../db/bootstrapQueries.js';
import type { FeedClient } from '../feed/client.js';
import { readDumpHead } from '../feed/dumpHead.js';
import type { EntityType } from '../feed/entities.js';
import { ArchiveError } from '../feed/errors.js';
import { fullDumpArchivePath, parseLatest } from '../feed/fullDumps.js';
import { signaturePath } from '../feed/protocol/urls.js';
import { DEFAULT_MAX_ARCHIVE_BYTES } from '../feed/sizeLimit.js';
import type { Logger } from '../logger.js';
import type { BootstrapStore } from './bootstrapStore.js';
import { verdictFromSums } from './fullDumpSums.js';
import { SignatureError, type Verifier } from './verifier.js';

/** Options of {@link bootstrapFromFullDumps}. */
export interface BootstrapOptions {
  /** Client over the full dump directory (`--dumps-url`), without a token: the dumps are public. */
  dumps: FeedClient;
  verifier: Verifier;
  entities: readonly EntityType[];
  /** Dump directory name (`20260510-001`); default the one `LATEST` names. */
  dump?: string;
  /** Where archives are downloaded (partial bytes are kept there across runs for Range resume). */
  workDir: string;
  logger: Logger;
  signal?: AbortSignal;
  /** Most decompressed bytes of one archive (`--max-dump-bytes` when given); default {@link fullDumpMaxBytes}. */
  maxBytes?: number;
  /** Progress of one entity type's import: compressed bytes read of `totalBytes`, lines so far. */
  onProgress?: (info: { entity: EntityType; readBytes: number; totalBytes: number; lines: number }) => void;
  /** Told when an entity type starts: `skipped` when an earlier run already stored it. */
  onEntity?: (info: { entity: EntityType; skipped: boolean }) => void;
  now?: () => Date;
}

/** How many times its archive's size a full dump may decompress to without `--max-dump-bytes`. */
export const FULL_DUMP_MAX_RATIO = 64;

/**
 * Most bytes a full dump archive of `archiveBytes` may decompress to when `--max-dump-bytes` is not
 * given: the feed's default limit, or {@link FULL_DUMP_MAX_RATIO} times the archive, whichever is
 * more. Full dumps run to tens of gigabytes per entity type (FEED.md, Sizes), and the release dump
 * decompresses past the feed's default at the JSON's ratio of about 12:1 (bench/RESULTS.md), where an
 * archive bomb's ratio is in the thousands.
 */
export function fullDumpMaxBytes(archiveBytes: number): number {
  return Math.max(DEFAULT_MAX_ARCHIVE_BYTES, FULL_DUMP_MAX_RATIO * archiveBytes);
}

/** What {@link bootstrapFromFullDumps} did. */
export interface BootstrapResult {
  dump: string;
  /** The dumps' REPLICATION_SEQUENCE: the sync continues at packet + 1. */
  packet: number;
  imported: { entity: EntityType; changes: number; quarantined: number; lines: number }[];
  /** Entity types an earlier, interrupted run had already stored. */
  skipped: EntityType[];
  /** Newer packets the database already held, and the gap to them recorded as incomplete; null before the position is recorded. */
  continuation: BootstrapContinuation | null;
}

/**
 * First import from upstream's full JSON dumps (FEED.md, Full JSON dumps): picks the dump (`LATEST`
 * unless given), then per entity type downloads `<entity>.tar.xz` (resuming partial bytes) and its
 * `.asc`, verifies it like the feed, and imports it through the JSON dump ingest of `store`
 * (bootstrapStore.ts: SQLite or PostgreSQL) in ONE transaction that also records the entity type as done, so an interrupted run (kill -9 included)
 * never leaves half an entity type and the next run skips what is stored. Once every type is
 * stored, the dumps' REPLICATION_SEQUENCE becomes the sync position. The archive is deleted after
 * its import (full dumps are large).
 * @throws Error when LATEST names no dump or an archive is missing (naming the URL), ArchiveError
 *   when the archives disagree on REPLICATION_SEQUENCE, SignatureError (fail mode), the feed
 *   client's errors, the abort reason, and the errors of the ingest.
 */
export async function bootstrapFromFullDumps(
  store: BootstrapStore,
  options: BootstrapOptions,
): Promise<BootstrapResult> {
  const { dumps, signal } = options;
  const dump = options.dump ?? (await latestDump(dumps, signal));
  const result: BootstrapResult = { dump, packet: -1, imported: [], skipped: [], continuation: null };
  const agree = (entity: EntityType, packet: number) => {
    if (result.packet !== -1 && packet !== result.packet) {
      throw new ArchiveError(
        `full dump ${dump}: ${entity} has REPLICATION_SEQUENCE ${packet}, the types before it ${result.packet}`,
      );
    }
    result.packet = packet;
  };
  for (const entity of options.entities) {
    signal?.throwIfAborted();
    const done = await store.bootstrappedPacket(dump, entity);
    options.onEntity?.({ entity, skipped: done !== undefined });
    if (done !== undefined) {
      agree(entity, done);
      result.skipped.push(entity);
      continue;
    }
    const archive = await fetchArchive(options, dump, entity);
    const { head, stored } = await importVerified(store, options, { dump, entity, ...archive }, agree);
    await rm(archive.path, { force: true });
    options.logger.info(
      {
        event: 'bootstrap-entity',
        dump,
        entity,
        packet: head.replicationSequence,
        changes: stored.changeCount,
      },
      `bootstrap: ${entity} of full dump ${dump} stored (${stored.changeCount} entities)`,
    );
    result.imported.push({
      entity,
      changes: stored.changeCount,
      quarantined: stored.quarantineCount,
      lines: stored.lineCount,
    });
  }
  if (result.packet !== -1) {
    const at = (options.now ?? (() => new Date()))().toISOString();
    result.continuation = await store.recordBootstrapPosition({
      dump,
      packet: result.packet,
      entities: [...options.entities],
      at,
    });
  }
  if (result.imported.length > 0) await mergeAfterImports(store, options.logger);
  return result;
}

/** Merges the search index the imports wrote (bootstrapStore.ts mergeSearchIndex) and logs how long it took. */
async function mergeAfterImports(store: BootstrapStore, logger: BootstrapOptions['logger']): Promise<void> {
  const merged = await store.mergeSearchIndex();
  if (merged) {
    logger.info(
      { event: 'search-merge', ...merged, ms: Math.round(merged.ms) },
      `bootstrap: search index merged into one segment in ${Math.round(merged.ms)} ms`,
    );
  }
}

/**
 * Imports one downloaded archive while its signature is checked on the same bytes: the import's
 * transaction commits only once the signature verified, and rolls back when it did not (the
 * verifier's work no longer waits for the whole file before the import starts). A refused
 * signature is the error reported even when reading the archive failed first, as it explains a
 * bad archive best (and the archive is not kept then).
 * @throws SignatureError; the errors of `agree`, of reading the archive's head and of the import
 */
async function importVerified(
  store: BootstrapStore,
  options: BootstrapOptions,
  archive: KeptArchive & { dump: string; entity: EntityType },
  agree: (entity: EntityType, packet: number) => void,
) {
  const { dump, entity } = archive;
  const verified = verifyArchive(options, dump, entity, archive);
  // Awaited below either way; without it, a refusal while the import fails would be unhandled.
  verified.catch(() => {});
  try {
    const head = await readDumpHead(archive.path);
    agree(entity, head.replicationSequence);
    const stored = await store.importFullDump({
      dump,
      archiveBytes: archive.size,
      packet: head.replicationSequence,
      entity,
      archivePath: archive.path,
      signal: options.signal,
      maxBytes: options.maxBytes ?? fullDumpMaxBytes(archive.size),
      now: options.now,
      settle: async () => {
        await verified;
        return null;
      },
      onProgress: (readBytes, lines) =>
        options.onProgress?.({ entity, readBytes, totalBytes: archive.size, lines }),
    });
    return { head, stored };
  } catch (error) {
    await verified;
    throw error;
  }
}

async function latestDump(dumps: FeedClient, signal?: AbortSignal): Promise<string> {
  const body = await dumps.text('LATEST', signal);
  if (body === null) throw new Error(`no full JSON dump: ${dumps.displayUrl('LATEST')} answered 404`);
  return parseLatest(body);
}

/** A full dump archive on disk: its path, size, and SHA-256 (hex) when this run downloaded it. */
interface KeptArchive {
  path: string;
  size: number;
  sha256?: string;
}

/**
 * Downloads (or finds, from an interrupted run) one archive. A whole download is kept as
 * `<workDir>/<dump>/<entity>.tar.xz` until imported, so a run killed during the import does not
 * download it again; partial bytes resume with Range.
 */
async function fetchArchive(
  options: BootstrapOptions,
  dump: string,
  entity: EntityType,
): Promise<KeptArchive> {
  const { dumps, signal } = options;
  const name = fullDumpArchivePath(dump, entity);
  const kept = join(options.workDir, dump, `${entity}.tar.xz`);
  const size = await stat(kept).then(
    (info) => info.size,
    () => -1,
  );
  if (size >= 0) return { path: kept, size };
  const downloaded = await dumps.download(name, join(options.workDir, dump), signal);
  if (downloaded.status === 'missing') {
    throw new Error(`full dump ${dump} has no ${entity} archive: ${dumps.displayUrl(name)} answered 404`);
  }
  await rename(downloaded.path, kept);
  return { path: kept, size: downloaded.size, sha256: downloaded.sha256 };
}

/**
 * Checks the signature of the kept archive (FEED.md, Signatures) and logs the verdict; a
 * refused archive is removed, so that the next run fetches it again.
 * @throws SignatureError when refused; the feed client's errors and the abort reason
 */
async function verifyArchive(
  options: BootstrapOptions,
  dump: string,
  entity: EntityType,
  archive: KeptArchive,
): Promise<void> {
  const kept = archive.path;
  const { dumps, signal } = options;
  const name = fullDumpArchivePath(dump, entity);
  try {
    // Without a key or with --verify off nothing reads the signature: it is not fetched.
    const signature = options.verifier.enabled ? await dumps.text(signaturePath(name), signal) : null;
    // Without its .asc, the directory's signed SHA256SUMS may vouch for the archive.
    const vouched =
      signature === null && options.verifier.enabled
        ? await verdictFromSums(options, dump, entity, archive)
        : undefined;
    const verdict = vouched ?? (await options.verifier.check(kept, name, signature, signal));
    options.logger.info(
      {
        event: 'bootstrap-verified',
        file: name,
        signature: verdict.status,
        fingerprint: verdict.fingerprint,
      },
      `${name}: signature ${verdict.status}${verdict.reason ? ` (${verdict.reason})` : ''}`,
    );
  } catch (error) {
    // A refused archive is not kept: the next run fetches it again.
    if (error instanceof SignatureError) await rm(kept, { force: true });
    throw error;
  }
}

import { FeedFatalError, safeMessage } from '../feed/errors.js';
import type { SyncContext, SyncReport } from './context.js';
import { discard, type FetchedFile, fetchFile, keep } from './fetchFile.js';
import type { FailureRecord } from './fileRecords.js';
import { noteFileOutcome, withRedownload } from './fileRetry.js';
import { type StreamedFile, streamFile } from './streamedFetch.js';

/**
 * The one step every archive of a pass goes through, JSON dump and replication packet alike:
 * fetch the archive and its `.asc`, verify, store it, move the archive to its kept path just
 * before the store's COMMIT, log, discard the download. A body unreadable as downloaded is fetched
 * again (bounded, fileRetry.ts); any other failure is recorded on the file and reported, and the
 * pass goes on. What differs between the two kinds of archive is a {@link FileStep}.
 */

/** One archive of a pass and how its kind is stored and recorded. */
export interface FileStep<T> {
  packet: number;
  /** Feed-root-relative name, e.g. `json-dumps/…/area.tar.xz` or `replication-186100-v2.tar.bz2`. */
  name: string;
  /** How the pass's problems and log name it (`json-dumps/…` or `replication packet 186100`). */
  label: string;
  /** True when the archive is stored already: nothing is fetched. Default false. */
  stored?(): boolean | Promise<boolean>;
  /**
   * Stores the verified archive at `fetched.tmpPath`; must call `beforeCommit` just before its
   * COMMIT. Used when the step has no {@link storeStreamed}.
   */
  store?(fetched: FetchedFile, beforeCommit: () => void): Promise<T>;
  /**
   * Stores the archive while it downloads and its signature is checked (streamedFetch.ts): must
   * COMMIT only after `file.settled` resolved, calling `keepOnCommit` with it just before.
   */
  storeStreamed?(file: StreamedFile, keepOnCommit: (fetched: FetchedFile) => void): Promise<T>;
  /** Records a 404 and gives the step's result for it; may throw to report it as a problem. */
  notThere(): T | Promise<T>;
  /**
   * Records a failure (status FAILED, attempts, next retry time); undefined when nothing was
   * recorded. A `reason` returned replaces the error's message in the report and log.
   */
  recordFailure(
    reason: string,
    error: unknown,
  ): FailureRecord | undefined | Promise<FailureRecord | undefined>;
}

/**
 * Runs `step` once in this pass: the stored result, the result of {@link FileStep.notThere}, or
 * undefined when it was stored already or failed (recorded, reported in `report.problems`).
 * @throws FeedFatalError and the abort reason (they stop the pass); FeedUnavailableError when
 *   several files in a row failed on the network (fileRetry.ts).
 */
export async function runFileStep<T>(
  ctx: SyncContext,
  report: SyncReport,
  step: FileStep<T>,
  now: () => Date,
): Promise<T | undefined> {
  let result: T | undefined;
  await guard(ctx, report, step, async () => {
    if (await step.stored?.()) return;
    result = await withRedownload(step, ctx.observe.logger, () => fetchVerifyStore(ctx, step, now));
  });
  return result;
}

/** What fetchFile and streamFile are told of one step: its file, the data directory, a prefetched download. */
function fetchOptions<T>(ctx: SyncContext, step: FileStep<T>, now: () => Date) {
  return {
    name: step.name,
    packet: step.packet,
    dataDir: ctx.feed.dataDir,
    signal: ctx.signal,
    now,
    download: ctx.prefetch?.take(step.name),
  };
}

/** Fetches, verifies and stores one archive (one download); the download is gone afterwards. */
async function fetchVerifyStore<T>(ctx: SyncContext, step: FileStep<T>, now: () => Date): Promise<T> {
  const { feed } = ctx;
  if (step.storeStreamed) return streamVerifyStore(ctx, step, step.storeStreamed, now);
  const fetched = await fetchFile(feed.client, feed.verifier, fetchOptions(ctx, step, now));
  if (!fetched) return step.notThere();
  try {
    return await step.store!(fetched, () => keep(feed.dataDir, fetched));
  } finally {
    discard(fetched);
  }
}

/**
 * Stores one archive while it downloads and is verified (streamedFetch.ts), taking the download
 * the prefetcher began for it if any. A failure reports the signature's verdict first (a bad
 * signature, not the store's error from reading unverified bytes), then the download's.
 */
async function streamVerifyStore<T>(
  ctx: SyncContext,
  step: FileStep<T>,
  store: NonNullable<FileStep<T>['storeStreamed']>,
  now: () => Date,
): Promise<T> {
  const { feed } = ctx;
  const streamed = await streamFile(feed.client, feed.verifier, fetchOptions(ctx, step, now));
  if (!streamed) return step.notThere();
  try {
    return await store(streamed, (fetched) => keep(feed.dataDir, fetched));
  } catch (error) {
    if (ctx.signal?.aborted) throw error;
    throw await streamed.explain(error);
  } finally {
    await streamed.discard();
  }
}

/**
 * Runs one file's work; an auth error or abort stops the sync, anything else is recorded by
 * `file.recordFailure` (attempts, next retry time), logged and reported. Several files in a row
 * failing on the network end the pass (fileRetry.ts, FeedUnavailableError).
 */
async function guard(
  ctx: SyncContext,
  report: SyncReport,
  file: Pick<FileStep<unknown>, 'packet' | 'label' | 'recordFailure'>,
  work: () => Promise<void>,
): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (error instanceof FeedFatalError || ctx.signal?.aborted) throw error;
    const failure = await file.recordFailure(safeMessage(error), error);
    // The recorded reason wins: e.g. "signature missing upstream" once the .asc has been missing a day.
    const reason = failure?.reason ?? safeMessage(error);
    const { packet, label } = file;
    report.problems.push({ packet, file: label, reason });
    ctx.observe.logger.error(
      {
        event: 'file-failed',
        packet,
        file: label,
        err: reason,
        attempts: failure?.attempts,
        nextRetryAt: failure?.nextRetryAt,
      },
      `cannot store ${label}: ${reason}${failure ? ` (attempt ${failure.attempts}; next retry ${failure.nextRetryAt})` : ''}`,
    );
    noteFileOutcome(report, error);
    return;
  }
  noteFileOutcome(report);
}

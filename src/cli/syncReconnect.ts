import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '../config.js';
import { serverUnavailable } from '../db/unavailable.js';
import { safeMessage } from '../feed/errors.js';
import { LockHeldError, LockLostError } from '../sync/errors.js';
import { EXIT } from './exit.js';
import { failIfLockLost, type Session } from './session.js';
import type { SyncWriter } from './syncWriter.js';

/**
 * Seconds a following sync on PostgreSQL waits before it opens the database again after its
 * connection broke, one per failed attempt in a row; past the end, the last.
 */
export const REOPEN_DELAYS_S = [1, 2, 5, 10, 30, 60];

/** A writer that held its lock this long starts the delays over after its next break. */
const STEADY_MS = 60_000;

/**
 * A following `sync` or `start` on PostgreSQL (not `--once`): runs `work` under the writer `open`
 * returns, and when the writer lock is lost because its connection broke (a server restart, a
 * failover, a network cut), opens the database again and takes the lock again, waiting
 * {@link REOPEN_DELAYS_S} between attempts for as long as the server does not answer, and longer
 * each time for a connection that keeps breaking (README, Exit codes). `open` gets the server
 * process of the session that held the lock, which the server may keep after a break only the
 * client saw: the new writer ends it first. The transaction the break cut is rolled back by the
 * server, so the next pass starts from what was committed, as after `kill -9`. The first open fails
 * as it always did.
 * @returns what `work` returns, or EXIT.ok when a signal stopped it while waiting
 * @throws LockHeldError (exit 5) when another sync took the lock meanwhile and `--wait` is not given;
 *   ConfigError when the database refuses the login or no longer exists; whatever `work` throws
 */
export async function followReconnecting(
  session: Session,
  open: (staleSession?: number) => Promise<SyncWriter>,
  work: (writer: SyncWriter) => Promise<number>,
): Promise<number> {
  let failures = 0;
  let stale: number | undefined;
  for (;;) {
    let writer: SyncWriter;
    try {
      writer = await open(stale);
    } catch (error) {
      if (session.signal.aborted && failures > 0) return EXIT.ok;
      if (failures === 0 || !reopenable(error)) throw error;
      if (!(await pause(session, failures++, error))) return EXIT.ok;
      continue;
    }
    if (failures > 0)
      session.logger.info(
        { event: 'writer-reconnected', attempts: failures },
        'the database answers again: the writer lock is held again, the sync goes on',
      );
    const lost = await runWriter(session, writer, work);
    if (typeof lost === 'number') return lost;
    stale = writer.backendPid;
    if (lost.heldMs >= STEADY_MS) failures = 0;
    if (!(await pause(session, failures++, lost.error))) return EXIT.ok;
  }
}

/** Runs `work` under `writer` and releases it: what `work` returned, or how the lock was lost. */
async function runWriter(
  session: Session,
  writer: SyncWriter,
  work: (writer: SyncWriter) => Promise<number>,
): Promise<number | { error: LockLostError; heldMs: number }> {
  const started = Date.now();
  try {
    return await failIfLockLost(writer.lost, session.signal, () => work(writer));
  } catch (error) {
    if (!(error instanceof LockLostError) || session.signal.aborted) throw error;
    return { error, heldMs: Date.now() - started };
  } finally {
    await writer.release().catch((error: unknown) =>
      // A broken connection may fail its own release; the server ended or will end the session.
      session.logger.warn(
        { event: 'writer-release-failed', err: safeMessage(error) },
        'releasing the writer failed',
      ),
    );
  }
}

/** True for an open that failed because the server does not answer yet (not a refused login). */
function reopenable(error: unknown): boolean {
  if (error instanceof ConfigError || error instanceof LockHeldError) return false;
  return serverUnavailable(error) || serverUnavailable((error as { cause?: unknown } | null)?.cause);
}

/** Waits before attempt `failures` + 1; false when a signal stopped the command meanwhile. */
async function pause(session: Session, failures: number, error: unknown): Promise<boolean> {
  const seconds = REOPEN_DELAYS_S[Math.min(failures, REOPEN_DELAYS_S.length - 1)]!;
  // A lost lock's own message says livefeed stopped, which it does not here: only what happened.
  const reason =
    error instanceof LockLostError ? `the writer lock was lost: ${error.how}` : safeMessage(error);
  session.logger.warn(
    { event: 'writer-reconnect', attempt: failures + 1, delaySeconds: seconds, err: reason },
    `the database connection broke: opening it again in ${seconds} s`,
  );
  try {
    await sleep(seconds * 1000, undefined, { signal: session.signal });
    return true;
  } catch {
    return false;
  }
}

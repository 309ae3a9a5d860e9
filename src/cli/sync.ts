import type { Logger } from '../logger.js';
import { instrumentSync } from '../ops/wiring.js';
import type { SyncContext, SyncReport } from '../sync/context.js';
import { combineObservers } from '../sync/observer.js';
import { follow, syncOnce } from '../sync/worker.js';
import type { DeliveryRun } from '../webhooks/deliver.js';
import type { CommandImplementation } from './command.js';
import { EXIT } from './exit.js';
import { failIfLockLost, openSession, type Session } from './session.js';
import { type SyncWriter, sqliteSyncWriter } from './syncWriter.js';
import { syncContext } from './targets.js';

/** Prints the files that failed and the quarantined lines; exit 1 when a file failed, else 0. */
function summarize(report: SyncReport, logger: Logger): number {
  for (const problem of report.problems) {
    process.stderr.write(`livefeed: packet ${problem.packet}: ${problem.file}: ${problem.reason}\n`);
  }
  if (report.quarantined > 0) {
    process.stderr.write(
      `livefeed: ${report.quarantined} malformed line(s) quarantined (GraphQL: quarantine { nodes { packet entity line reason } })\n`,
    );
  }
  logger.info(
    {
      event: 'sync-done',
      latest: report.latest,
      pending: report.pending,
      failed: report.problems.length,
      quarantined: report.quarantined,
    },
    'sync caught up',
  );
  return report.problems.length > 0 ? EXIT.failedFiles : EXIT.ok;
}

/** Names on stderr each webhook `sync --once` could not deliver to; its events wait for the next run. */
function reportWebhooks(runs: DeliveryRun[]): void {
  for (const run of runs.filter((r) => r.outcome === 'failed')) {
    process.stderr.write(
      `livefeed: webhook ${run.name}: not delivered: ${run.error}; its events wait for the next run (livefeed status)\n`,
    );
  }
}

/**
 * `start`: says where GraphiQL is once more after the first sync pass, so the URL is the last line
 * on the terminal once the data is there, not scrolled away by the pass's log lines.
 */
function announceWhenSynced(ctx: SyncContext, url: string, logger: Logger, demo: boolean): SyncContext {
  let announced = false;
  const ready = {
    passFinished: () => {
      if (announced) return;
      announced = true;
      logger.info({ event: 'ready', url, demo }, `GraphiQL: ${url}${demo ? ' (demo data)' : ''}`);
    },
  };
  return { ...ctx, observe: { ...ctx.observe, observer: combineObservers(ctx.observe.observer, ready) } };
}

/**
 * Syncs the session's feed into its database under the writer lock (src/sync/lock.ts; on
 * PostgreSQL an advisory lock, src/sync/postgres/lock.ts): once (`--once`) or following until
 * stopped. A lost lock stops it as a signal does, but exits 4 (`failIfLockLost`); except that a
 * following sync on PostgreSQL whose connection broke opens the database again and takes the lock
 * again (syncReconnect.ts).
 * @param graphiqlUrl in `start`, announced again after the first pass
 * @returns exit 0, or 1 with `--once` when a file failed
 * @throws LockHeldError (exit 5) when another sync holds the lock and `--wait` is not given;
 *   LockLostError when the lock was lost while syncing
 */
export async function runSync(session: Session, graphiqlUrl?: string): Promise<number> {
  const { database } = session;
  if (database.kind === 'postgres' && !session.config.once) {
    const [{ postgresSyncWriter }, { followReconnecting }] = await Promise.all([
      import('./syncPostgres.js'),
      import('./syncReconnect.js'),
    ]);
    return followReconnecting(
      session,
      (staleSession) => postgresSyncWriter(session, database, staleSession),
      (writer) => syncUnderLock(session, writer, graphiqlUrl),
    );
  }
  const writer =
    session.database.kind === 'postgres'
      ? await (await import('./syncPostgres.js')).postgresSyncWriter(session, session.database)
      : await sqliteSyncWriter(session);
  try {
    return await failIfLockLost(writer.lost, session.signal, () =>
      syncUnderLock(session, writer, graphiqlUrl),
    );
  } finally {
    await writer.release();
  }
}

/** {@link runSync}'s work under the writer lock `writer` holds. */
async function syncUnderLock(session: Session, writer: SyncWriter, graphiqlUrl?: string): Promise<number> {
  const { config, logger, target, ops } = session;
  const signal = AbortSignal.any([session.signal, writer.lost]);
  const synced = await syncContext(config, target, writer.store, logger, signal, ops);
  try {
    return await syncWith(session, writer, instrumentSync(synced, ops, logger), signal, graphiqlUrl);
  } finally {
    // A PostgreSQL sync that reconnects makes a client per writer: none may keep its sockets.
    await synced.feed.client.close();
  }
}

/** {@link syncUnderLock} with its feed client made. */
async function syncWith(
  session: Session,
  writer: SyncWriter,
  instrumented: SyncContext,
  signal: AbortSignal,
  graphiqlUrl?: string,
): Promise<number> {
  const { config, logger, target } = session;
  const webhooks = await writer.webhooks(signal);
  const ctx = webhooks.watch(
    graphiqlUrl ? announceWhenSynced(instrumented, graphiqlUrl, logger, target.demo) : instrumented,
  );
  if (config.once) {
    const report = await syncOnce(ctx, config);
    reportWebhooks(await webhooks.deliverNow());
    return summarize(report, logger);
  }
  webhooks.follow();
  try {
    await follow(ctx, { pollIntervalMs: config.pollIntervalMs, from: config.from, to: config.to });
  } finally {
    await webhooks.stop();
  }
  return EXIT.ok;
}

/** `livefeed sync`: catch up from the feed into the database; follow unless `--once`. */
export const syncCommand: CommandImplementation = {
  async run(ctx) {
    const session = await openSession('sync', ctx);
    try {
      return await runSync(session);
    } finally {
      await session.close();
    }
  },
};

import type { EntityType } from '../feed/entities.js';
import { jsonDumpPath } from '../feed/protocol/urls.js';
import type { SyncContext, SyncReport } from './context.js';
import type { FetchedFile } from './fetchFile.js';
import { runFileStep } from './fileStep.js';
import { EXPECTED_JSON_DUMPS_SCHEMA_NUMBER } from './packetFacts.js';
import type { SettledBy } from './state.js';
import type { StreamedFile } from './streamedFetch.js';

/**
 * What is particular to a JSON dump in the pass's {@link runFileStep}: how it is stored (ingest.ts),
 * that a 404 is PENDING and how a failure is recorded. worker.ts orders the steps.
 */

/**
 * Asks the feed for one JSON dump as a {@link runFileStep}: stored (counted in the report), PENDING
 * on a 404, or FAILED with its reason and next retry time. Resolves to true when it was stored.
 */
export async function askDump(
  ctx: SyncContext,
  report: SyncReport,
  packet: number,
  entity: EntityType,
  now: () => Date,
  /** What a 404 settles the dump as, at once (a recheck with evidence); default: PENDING, settled later. */
  notThereSettledBy?: SettledBy,
): Promise<boolean> {
  const name = jsonDumpPath(packet, entity);
  const stored = await runFileStep(
    ctx,
    report,
    {
      packet,
      name,
      label: name,
      storeStreamed: (file, keepOnCommit) =>
        storeDump(ctx, { packet, entity, file, keepOnCommit }, now, report),
      notThere: async () => {
        if (notThereSettledBy)
          await ctx.store.markNoChanges(packet, entity, notThereSettledBy, now().toISOString());
        else await ctx.store.markPending(packet, entity, now().toISOString());
        return false;
      },
      recordFailure: (reason, error) => ctx.store.recordFailure({ packet, entity }, reason, now(), error),
    },
    now,
  );
  if (stored) report.dumpsStored++;
  return stored === true;
}

/**
 * Stores a JSON dump as it downloads, in its transaction, committed once the whole file arrived and
 * its signature verified (streamedFetch.ts); a check that fails early stops the read at once. Logs
 * it and tells the observer; lets the store do its housekeeping (SQLite: a WAL grown too large).
 */
async function storeDump(
  ctx: SyncContext,
  dump: {
    packet: number;
    entity: EntityType;
    file: StreamedFile;
    keepOnCommit: (fetched: FetchedFile) => void;
  },
  now: () => Date,
  report: SyncReport,
): Promise<true> {
  const { packet, entity, file } = dump;
  const name = jsonDumpPath(packet, entity);
  const failed = new AbortController();
  file.settled.catch((error: unknown) => failed.abort(error));
  let fetched: FetchedFile | undefined;
  const result = await ctx.store.ingestDump({
    packet,
    entity,
    archivePath: name,
    archive: file.archive,
    archiveBytes: file.archiveBytes,
    file: null,
    signal: ctx.signal ? AbortSignal.any([ctx.signal, failed.signal]) : failed.signal,
    maxBytes: ctx.feed.maxDumpBytes,
    now,
    settle: async () => {
      fetched = await file.settled;
      return fetched.record;
    },
    beforeCommit: () => dump.keepOnCommit(fetched!),
  });
  const { record } = await file.settled;
  report.quarantined += result.quarantineCount;
  const schemaNumber = result.metadata.jsonDumpsSchemaNumber;
  if (schemaNumber !== null && schemaNumber !== EXPECTED_JSON_DUMPS_SCHEMA_NUMBER) {
    ctx.observe.logger.warn(
      { event: 'json-dump-schema', packet, entity, jsonDumpsSchemaNumber: schemaNumber },
      `${name} has JSON_DUMPS_SCHEMA_NUMBER ${schemaNumber}, expected ${EXPECTED_JSON_DUMPS_SCHEMA_NUMBER}: stored, recorded as an event`,
    );
  }
  ctx.store.housekeeping('dumpStored', ctx.observe.logger);
  const level = result.quarantineCount > 0 ? 'warn' : 'info';
  const counts = {
    changes: result.changeCount,
    quarantined: result.quarantineCount,
    bytes: record.size,
  };
  ctx.observe.logger[level](
    { event: 'dump-stored', packet, entity, ...counts, signature: record.signature },
    `stored ${name}: ${result.changeCount} changes${result.quarantineCount ? `, ${result.quarantineCount} lines quarantined` : ''}`,
  );
  ctx.observe.observer?.dumpStored?.({ packet, entity, ...counts });
  return true;
}

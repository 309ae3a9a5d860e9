import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { changeId, dumpIdRange } from '../../db/keys.js';
import type { PostgresStore } from '../../db/postgres/client.js';
import { indexStagedDump, unindexDumpCopy } from '../../db/postgres/searchIndex.js';
import { isTitled } from '../../db/searchIndex.js';
import type { EntityType } from '../../feed/entities.js';
import { readJsonDump } from '../../feed/jsonDump.js';
import { sameCopy } from '../dumpCopy.js';
import { dumpReadOptions } from '../dumpRead.js';
import type { IngestJsonDumpOptions, IngestResult } from '../ingest.js';
import { MEMBER_SPANS, mbidOffset } from '../lineScan.js';
import { diagnoseLineBytes } from '../lines.js';
import { COPY_CHANGES_SQL, CopyRowWriter, hasCopyControlByte } from './copyRows.js';
import { storesBehindServedOn } from './feedServed.js';
import {
  deleteDumpCopy,
  insertQuarantine,
  type QuarantinedLine,
  recordDump,
  storedCopyOn,
} from './record.js';
import { SearchStage, stagedFieldsOf } from './searchStage.js';

/** Bytes of quarantined lines held before they are written (the COPY holds the connection until then). */
const QUARANTINE_HELD_BYTES = 8 << 20;
/** Bytes of staged search columns held before they are copied (the same reason). */
const STAGE_HELD_BYTES = 4 << 20;

/**
 * One dump's lines on their way into `changes`: the same checks as the SQLite ingest (sync/lineScan.ts and sync/lines.ts:
 * the one-pass `mbidOffset` and UTF-8, then `diagnoseLine` for what it refuses), the rows through
 * `COPY ... FROM STDIN` (copyRows.ts). Keys allow a straight COPY into `changes`: ids follow from
 * (packet, entity type, position), and the dump's earlier copy was deleted first. Quarantined lines
 * wait in memory, as the COPY holds the connection, and so do the search index's columns of each
 * line, found in the same pass (searchStage.ts); past {@link QUARANTINE_HELD_BYTES} or
 * {@link STAGE_HELD_BYTES} the COPY is ended, they are written, and a new COPY goes on (memory stays
 * bounded, whatever the dump's size).
 */
class PostgresChangeWriter {
  changeCount = 0;
  quarantineCount = 0;
  private copy: ReturnType<typeof copyFrom> | undefined;
  private rows: CopyRowWriter | undefined;
  private held: QuarantinedLine[] = [];
  private heldBytes = 0;
  private draining = false;
  /** The write of held rows under way, if any (see {@link finish}). */
  private writing: Promise<void> | undefined;
  /** The COPY's error, reported to the reader at its next chunk (see {@link whenReady}). */
  private failure: Error | undefined;
  private readonly base: number;
  /** Where the search index's members are in the line being added (see mbidOffset). */
  private readonly spans = new Int32Array(MEMBER_SPANS);
  private readonly titled: boolean;

  constructor(
    private readonly client: pg.ClientBase,
    private readonly dump: { packet: number; entity: EntityType },
    private readonly stage: SearchStage,
  ) {
    if (!/^[a-z-]+$/.test(dump.entity)) throw new Error(`not an entity type: ${JSON.stringify(dump.entity)}`);
    this.base = changeId(dump.packet, dump.entity, 0);
    this.titled = isTitled(dump.entity);
  }

  /** Opens the COPY of the dump's rows. */
  start(): void {
    const copy = this.client.query(copyFrom(COPY_CHANGES_SQL));
    copy.on('error', (error: Error) => {
      this.failure ??= error;
    });
    this.copy = copy;
    this.rows = new CopyRowWriter(copy, this.dump.packet, this.dump.entity);
    // A 'drain' owed by an ended COPY never comes from this one.
    this.draining = false;
  }

  /** Checks and stores line `position` (its bytes without `\n`, a view valid only during the call). */
  add(line: Buffer, position: number): void {
    const at = mbidOffset(line, this.spans);
    if (at >= 0 && isUtf8(line)) {
      const id = this.base + position;
      if (!this.rows!.add(id, position, line, at, line)) this.draining = true;
      this.stage.add(id, line.toString('latin1', at, at + 36), stagedFieldsOf(line, this.spans, this.titled));
      this.changeCount++;
      return;
    }
    const { diagnosis } = diagnoseLineBytes(line);
    const json = diagnosis.ok ? Buffer.from(diagnosis.json, 'utf8') : undefined;
    if (diagnosis.ok && json && !hasCopyControlByte(json)) {
      if (!this.rows!.add(this.base + position, position, Buffer.from(diagnosis.mbid, 'latin1'), 0, json))
        this.draining = true;
      // Re-escaped: no spans; SQL reads the columns from the stored line.
      this.stage.add(this.base + position, diagnosis.mbid, undefined);
      this.changeCount++;
      return;
    }
    // Never reached by a line diagnoseLine accepts (control bytes in strings escaped, none else parse); kept so that
    // such a line would be quarantined, not written into the COPY where it would break the row.
    const reason = diagnosis.ok ? 'control byte 0x01 or 0x02 outside a JSON string' : diagnosis.reason;
    this.held.push({ line: position, raw: Buffer.from(line), reason });
    this.heldBytes += line.length;
    this.quarantineCount++;
  }

  /**
   * The reader's backpressure (readJsonDump `whenReady`): a promise while the COPY stream wants
   * 'drain', or while quarantined lines or staged columns pass their bound and are being written.
   */
  whenReady(): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    if (this.heldBytes >= QUARANTINE_HELD_BYTES || this.stage.heldBytes >= STAGE_HELD_BYTES) {
      this.writing = this.writeHeld(true);
      return this.writing;
    }
    if (!this.draining) return undefined;
    this.draining = false;
    return once(this.copy!, 'drain').then(() => undefined);
  }

  /**
   * After the last line: waits for a write of held rows still under way (the reader may end
   * while the promise of its last chunk is pending), then ends the COPY and writes the rest.
   */
  async finish(): Promise<void> {
    await this.writing;
    await this.writeHeld(false);
  }

  /** Ends the COPY and writes the quarantined lines and staged columns held; with `resume`, opens a new COPY. */
  private async writeHeld(resume: boolean): Promise<void> {
    await this.endCopy();
    await this.stage.copy(this.client);
    await insertQuarantine(this.client, this.dump, this.held);
    this.held = [];
    this.heldBytes = 0;
    if (resume) this.start();
  }

  /** Sends the last rows and waits until PostgreSQL accepted the COPY. */
  private async endCopy(): Promise<void> {
    const copy = this.copy!;
    this.rows!.flush();
    this.copy = undefined;
    copy.end();
    await finished(copy);
  }

  /** Stops a COPY in flight (PostgreSQL then fails it), so that the transaction can roll back. */
  abort(error: Error): void {
    this.copy?.destroy(error);
    this.copy = undefined;
  }
}

/**
 * Stores every line of one JSON dump archive as changes of (packet, entity) in a PostgreSQL
 * database, in ONE transaction: the PostgreSQL twin of sync/ingest.ts `ingestJsonDump`, with the
 * same options, checks, quarantine, ids and bookkeeping. The dump is visible whole or not at all;
 * an earlier copy of it is replaced. Any error, a bad archive or an abort of `signal` rolls it back.
 * The search index is kept in the same transaction (db/postgres/searchIndex.ts). `inTransaction`
 * writes the caller's own rows in the dump's transaction, after its records and before COMMIT
 * (bootstrap's record of an imported entity type).
 * @throws ArchiveError (see readJsonDump), the abort reason, or a PostgreSQL error; nothing is stored then.
 */
export async function ingestJsonDumpPostgres(
  store: PostgresStore,
  options: IngestJsonDumpOptions,
  inTransaction?: (client: pg.ClientBase) => Promise<void>,
): Promise<IngestResult> {
  const { packet, entity } = options;
  const [first, last] = dumpIdRange(packet, entity);
  const now = (options.now ?? (() => new Date()))().toISOString();
  const client = await store.pool.connect();
  // A connection that breaks between two statements reports it as an 'error' event, which would
  // end the process unheard; the next statement fails with it anyway, and that rolls back.
  const ignore = () => {};
  client.on('error', ignore);
  const stage = new SearchStage();
  const writer = new PostgresChangeWriter(client, { packet, entity }, stage);
  try {
    await client.query('BEGIN');
    // Stored again behind the stream: an identical copy rewrites nothing readers saw.
    const before = (await storesBehindServedOn(client, packet))
      ? await storedCopyOn(client, first, last)
      : undefined;
    await unindexDumpCopy(client, { first, last, packet });
    await deleteDumpCopy(client, { packet, entity, first, last });
    await stage.create(client);
    writer.start();
    const summary = await readJsonDump(
      options.archive ?? options.archivePath,
      { ...dumpReadOptions(options, writer), whenReady: () => writer.whenReady() },
      (line, n) => writer.add(line, n),
    );
    await writer.finish();
    await indexStagedDump(client, { first, last, packet });
    const { changeCount, quarantineCount } = writer;
    const unchanged =
      before !== undefined &&
      before.count === changeCount &&
      sameCopy(before, await storedCopyOn(client, first, last));
    const file = options.settle ? await options.settle() : options.file;
    await recordDump(client, {
      packet,
      entity,
      file,
      changeCount,
      quarantineCount,
      now,
      metadata: summary.metadata,
      unchanged,
    });
    await inTransaction?.(client);
    options.signal?.throwIfAborted();
    options.beforeCommit?.();
    await client.query('COMMIT');
    client.removeListener('error', ignore);
    client.release();
    return { ...summary, changeCount, quarantineCount, unchanged };
  } catch (error) {
    await rollBack(client, writer, error as Error);
    client.removeListener('error', ignore);
    throw error;
  }
}

/** Rolls the dump's transaction back; a connection that cannot is closed, which rolls back too. */
async function rollBack(client: pg.PoolClient, writer: PostgresChangeWriter, error: Error): Promise<void> {
  writer.abort(error);
  try {
    await client.query('ROLLBACK');
    client.release();
  } catch (rollbackError) {
    client.release(rollbackError as Error);
  }
}

import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import type { Database, Statement } from 'better-sqlite3';
import type { Store } from '../db/client.js';
import { recordEventsWrite, storesBehindServed } from '../db/feedServed.js';
import { changeId, dumpIdRange, idPacketSql, idPositionSql } from '../db/keys.js';
import { suspendMbidIndex } from '../db/mbidIndex.js';
import { isTitled, SearchIndexWriter } from '../db/searchIndex.js';
import { cachedOn, cachedStatement } from '../db/statements.js';
import type { EntityType } from '../feed/entities.js';
import { type JsonDumpMetadata, readJsonDump } from '../feed/jsonDump.js';
import type { XzDecoder } from '../feed/xz.js';
import { sameCopy, storedCopy } from './dumpCopy.js';
import { dumpReadOptions } from './dumpRead.js';
import { MEMBER_SPANS, mbidOffset } from './lineScan.js';
import { diagnoseLineBytes } from './lines.js';
import { recordJsonDumpSchemaNumber, recordPacketFacts } from './packetFacts.js';
import { lineNameOf, searchFieldsOf } from './searchFields.js';
import { inTransaction } from './transaction.js';

/** A feed file as recorded in `feed_files` (FEED.md: upstream serves no checksums; we compute them). */
export interface FeedFileRecord {
  name: string;
  packet: number;
  size: number;
  sha256: string;
  signature: 'VERIFIED' | 'UNVERIFIED' | 'INVALID' | 'MISSING';
  fingerprint: string | null;
  fetchedAt: string;
  storedPath: string | null;
  signatureStoredPath: string | null;
}

/** Options of {@link ingestJsonDump}. */
export interface IngestJsonDumpOptions {
  packet: number;
  entity: EntityType;
  /** Local copy of the verified archive. */
  archivePath: string;
  /** The archive's bytes as they arrive, read instead of `archivePath` (issue 16). */
  archive?: Readable;
  /** The archive's size in bytes when known (see readJsonDump's `archiveBytes`). */
  archiveBytes?: number | null;
  /** The file's record, written in the same transaction; null for a local import. */
  file: FeedFileRecord | null;
  /**
   * Awaited after the last line, before anything is recorded: the signature check of a streamed
   * archive (issue 16) or of a full dump's archive being imported (sync/bootstrap.ts). It gives the
   * file's record (replacing `file`; null for none); when it rejects, the dump is rolled back and
   * nothing of it is visible.
   */
  settle?: () => Promise<FeedFileRecord | null>;
  signal?: AbortSignal;
  now?: () => Date;
  /** Called in the transaction just before COMMIT (e.g. to move the archive into place). */
  beforeCommit?: () => void;
  /** Most decompressed bytes of the archive (see readJsonDump; `--max-dump-bytes`). */
  maxBytes?: number;
  /** xz decoder (see readJsonDump). Default `auto`. */
  decoder?: XzDecoder;
  /**
   * A bulk load (a full dump into a database holding fewer rows than it adds): the MBID index is
   * dropped while the lines are written and built again, sorted, before COMMIT (db/mbidIndex.ts).
   */
  bulk?: boolean;
  /** Compressed bytes of the archive read so far (see readJsonDump) and lines stored so far, for progress reports. */
  onProgress?: (compressedBytes: number, lines: number) => void;
}

/** What one JSON dump added. */
export interface IngestResult {
  metadata: JsonDumpMetadata;
  changeCount: number;
  quarantineCount: number;
  lineCount: number;
  bytes: number;
  /**
   * True when the dump replaced a copy at or behind the change stream's served frontier with
   * exactly the same changes: no rewrite was recorded (README, Change stream).
   */
  unchanged?: boolean;
}

/** Rows per multi-row INSERT of the fast path (fewer calls from JS into SQLite). */
const BATCH_ROWS = 64;
/** `changes.name` of a line that has none, as opposed to NULL, not known (db/schema.ts). */
const NO_NAME = Buffer.alloc(0);
/** Bound values per row: id, MBID, line, name (packet and position are read from the id in SQL). */
const ROW_ARGS = 4;
/** Line bytes after which a batch is written early, so that long lines are not held in numbers. */
const BATCH_BYTES = 1 << 20;

/**
 * Writes one JSON dump's lines as changes. The fast path checks a line in one pass over its bytes
 * (`mbidOffset`: valid JSON object with an MBID `id`, and valid UTF-8) and binds the bytes as they
 * are, cast to TEXT by SQLite: no JS string, no JSON.parse, no second parse by SQLite. Rows go in
 * batches of {@link BATCH_ROWS} through one multi-row INSERT with positional parameters, prepared
 * once per connection and entity type (the packet and position are read from the id in SQL).
 * Lines the fast path refuses go to `diagnoseLine`: stored re-escaped, or quarantined with the reason.
 * The current state needs no write of its own: it is read from the MBID index these INSERTs keep
 * (db/currentQueries.ts), so a line is written once. The check runs on this thread: on the 2-core
 * reference machine xz keeps the other core busy, and moving the check to a worker thread or the reader to a process measured slower (bench/RESULTS.md).
 */
class ChangeWriter {
  changeCount = 0;
  quarantineCount = 0;
  private readonly base: number;
  private readonly many: Statement;
  private readonly one: Statement;
  private readonly quarantine: Statement;
  private readonly args: unknown[] = [];
  private heldBytes = 0;
  /** Where the search index's members are in the line being added (see mbidOffset). */
  private readonly spans = new Int32Array(MEMBER_SPANS);
  private readonly titled: boolean;

  constructor(
    db: Database,
    private readonly packet: number,
    private readonly entity: EntityType,
    private readonly search: SearchIndexWriter,
  ) {
    this.titled = isTitled(entity);
    if (!/^[a-z-]+$/.test(entity)) throw new Error(`not an entity type: ${JSON.stringify(entity)}`);
    this.base = changeId(packet, entity, 0);
    // The entity type (checked above) is a constant of the dump, and the packet and position are
    // packed in the id (db/keys.ts): read from it in SQL, they need no binding per row, and the
    // statements, the same for every dump of the entity type, are prepared once per connection.
    // OR FAIL: a failing row ends the statement without undoing the rows before it, so SQLite
    // keeps no statement journal. With the random-UUID MBID index, each 64-row INSERT touches
    // dozens of index pages, and the journal of their old contents (written to a temp file) took
    // half the ingest's system time (bench/RESULTS.md). Any error still rolls back the whole dump.
    // A JS number is bound as a REAL: the id is cast back to the integer it holds (exact below 2^53).
    const insert = (rows: number) =>
      `INSERT OR FAIL INTO changes (id, packet, entity, position, mbid, data, name)
       SELECT id, ${idPacketSql('id')}, '${entity}', ${idPositionSql('id')}, mbid, CAST(line AS TEXT), name
       FROM (SELECT CAST(column1 AS INTEGER) AS id, column2 AS mbid, column3 AS line, column4 AS name
         FROM (VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')}))`;
    this.many = cachedOn(db, insert(BATCH_ROWS));
    this.one = cachedOn(db, insert(1));
    this.quarantine = cachedOn(
      db,
      'INSERT INTO quarantine (packet, entity, line, raw, reason) VALUES (?, ?, ?, ?, ?)',
    );
  }

  /** Stores line `position` (its bytes without `\n`; not kept past {@link flush}). */
  add(line: Buffer, position: number): void {
    const at = mbidOffset(line, this.spans);
    if (at >= 0 && isUtf8(line)) {
      const args = this.args;
      const id = this.base + position;
      const mbid = line.toString('latin1', at, at + 36);
      args.push(id, mbid, line, lineNameOf(line, this.spans) ?? NO_NAME);
      const fields = searchFieldsOf(line, this.spans, this.titled);
      if (fields) this.search.stage(id, mbid, fields);
      else this.search.stageLine(id, mbid, line);
      this.heldBytes += line.length;
      if (args.length === BATCH_ROWS * ROW_ARGS || this.heldBytes >= BATCH_BYTES) this.flush();
      return;
    }
    this.slowPath(line, position);
  }

  /** Writes the rows held for the batch. */
  flush(): void {
    const args = this.args;
    if (args.length === BATCH_ROWS * ROW_ARGS) this.many.run(args);
    else for (let i = 0; i < args.length; i += ROW_ARGS) this.one.run(args.slice(i, i + ROW_ARGS));
    this.changeCount += args.length / ROW_ARGS;
    args.length = 0;
    this.heldBytes = 0;
  }

  private slowPath(line: Buffer, position: number): void {
    const { text, diagnosis } = diagnoseLineBytes(line);
    if (diagnosis.ok) {
      // A re-escaped line's name is left unknown (NULL): readers take it from the line.
      this.one.run(this.base + position, diagnosis.mbid, diagnosis.json, null);
      this.search.stageLine(this.base + position, diagnosis.mbid, diagnosis.json);
      this.changeCount++;
    } else {
      this.quarantine.run(this.packet, this.entity, position, text, diagnosis.reason);
      this.quarantineCount++;
    }
  }
}

/**
 * Stores every line of one JSON dump archive as changes of (packet, entity) in ONE transaction: the
 * dump is visible whole or not at all, and an earlier copy of the same dump is replaced, so re-runs
 * add nothing twice. Lines that are not a JSON object with an MBID `id` are quarantined with the
 * reason. Also records the dump as SYNCED, the packet's TIMESTAMP and schema sequence, and `file`.
 * @throws ArchiveError (see readJsonDump) or a SQLite error; nothing is stored then.
 */
export async function ingestJsonDump(store: Store, options: IngestJsonDumpOptions): Promise<IngestResult> {
  const { packet, entity } = options;
  const [first, last] = dumpIdRange(packet, entity);
  const now = (options.now ?? (() => new Date()))().toISOString();

  return inTransaction(store, async () => {
    // The search index follows the stored lines in the same transaction (db/searchIndex.ts).
    // Stored again behind the stream: an identical copy rewrites nothing readers saw.
    const before = storesBehindServed(store, packet) ? storedCopy(store, first, last) : undefined;
    const search = new SearchIndexWriter(store, entity);
    search.unindexOldCopy({ first, last, packet });
    const rebuildMbidIndex = options.bulk ? suspendMbidIndex(store.sqlite) : undefined;
    cachedStatement(store, 'DELETE FROM changes WHERE id BETWEEN ? AND ?').run(first, last);
    cachedStatement(store, 'DELETE FROM quarantine WHERE packet = ? AND entity = ?').run(packet, entity);
    const writer = new ChangeWriter(store.sqlite, packet, entity, search);
    const summary = await readJsonDump(
      options.archive ?? options.archivePath,
      dumpReadOptions(options, writer),
      (line, n) => writer.add(line, n),
    );
    writer.flush();
    rebuildMbidIndex?.();
    search.indexDump({ first, last, packet }, { bulk: options.bulk });
    const { changeCount, quarantineCount } = writer;
    const unchanged =
      before !== undefined &&
      before.count === changeCount &&
      sameCopy(before, storedCopy(store, first, last));
    const file = options.settle ? await options.settle() : options.file;
    recordDump(
      store,
      { ...options, file },
      { changeCount, quarantineCount, now, metadata: summary.metadata, unchanged },
    );
    options.beforeCommit?.();
    return { ...summary, changeCount, quarantineCount, unchanged };
  });
}

function recordDump(
  store: Store,
  options: IngestJsonDumpOptions,
  facts: {
    changeCount: number;
    quarantineCount: number;
    now: string;
    metadata: JsonDumpMetadata;
    unchanged: boolean;
  },
): void {
  const { packet, entity, file } = options;
  if (!facts.unchanged) recordEventsWrite(store, packet);
  if (file) upsertFeedFile(store, file);
  cachedStatement(
    store,
    `INSERT INTO dumps (packet, entity, status, change_count, quarantine_count, file_name, error, attempts, checked_at, updated_at)
       VALUES (?, ?, 'SYNCED', ?, ?, ?, NULL, 0, NULL, ?)
       ON CONFLICT (packet, entity) DO UPDATE SET status = 'SYNCED', change_count = excluded.change_count,
         quarantine_count = excluded.quarantine_count, file_name = excluded.file_name, error = NULL,
         next_retry_at = NULL, settled_by = NULL, signature_missing_since = NULL, updated_at = excluded.updated_at`,
  ).run(packet, entity, facts.changeCount, facts.quarantineCount, file?.name ?? null, facts.now);
  recordPacketFacts(store.sqlite, packet, facts.metadata, facts.now);
  recordJsonDumpSchemaNumber(
    store.sqlite,
    { packet, entity, number: facts.metadata.jsonDumpsSchemaNumber },
    facts.now,
  );
}

/** Inserts or replaces the `feed_files` row of `file`. */
export function upsertFeedFile(store: Store, file: FeedFileRecord): void {
  cachedStatement(
    store,
    `INSERT OR REPLACE INTO feed_files (name, packet, size, sha256, signature, fingerprint, fetched_at, stored_path, signature_stored_path)
       VALUES (@name, @packet, @size, @sha256, @signature, @fingerprint, @fetchedAt, @storedPath, @signatureStoredPath)`,
  ).run(file);
}

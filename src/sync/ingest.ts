import type { Statement } from 'better-sqlite3';
import type { Store } from '../db/client.js';
import { changeId, dumpIdRange } from '../db/keys.js';
import type { EntityType } from '../feed/entities.js';
import { type JsonDumpMetadata, readJsonDump } from '../feed/jsonDump.js';
import { diagnoseLine, MBID_GLOB } from './lines.js';
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
  /** The file's record, written in the same transaction; null for a local import. */
  file: FeedFileRecord | null;
  signal?: AbortSignal;
  now?: () => Date;
  /** Called in the transaction just before COMMIT (e.g. to move the archive into place). */
  beforeCommit?: () => void;
}

/** What one JSON dump added. */
export interface IngestResult {
  metadata: JsonDumpMetadata;
  changeCount: number;
  quarantineCount: number;
  lineCount: number;
  bytes: number;
}

// One parse of the line by SQLite gives both validation and the MBID; lines it refuses go to the
// slow path (diagnoseLine) and then to quarantine.
const INSERT_CHANGE = `
  INSERT INTO changes (id, packet, entity, position, mbid, data)
  SELECT @id, @packet, @entity, @position, m, @line
  FROM (SELECT CASE WHEN json_valid(@line) THEN json_extract(@line, '$.id') END AS m)
  WHERE typeof(m) = 'text' AND m GLOB '${MBID_GLOB}'`;

interface Statements {
  insert: Statement;
  insertChecked: Statement;
  quarantine: Statement;
}

function prepare(store: Store): Statements {
  return {
    insert: store.sqlite.prepare(INSERT_CHANGE),
    insertChecked: store.sqlite.prepare(
      'INSERT INTO changes (id, packet, entity, position, mbid, data) VALUES (@id, @packet, @entity, @position, @mbid, @line)',
    ),
    quarantine: store.sqlite.prepare(
      'INSERT INTO quarantine (packet, entity, line, raw, reason) VALUES (?, ?, ?, ?, ?)',
    ),
  };
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
  const statements = prepare(store);
  const [first, last] = dumpIdRange(packet, entity);
  const now = (options.now ?? (() => new Date()))().toISOString();
  let changeCount = 0;
  let quarantineCount = 0;
  const row = { id: 0, packet, entity, position: 0, line: '', mbid: '' };

  return inTransaction(store, async () => {
    store.sqlite.prepare('DELETE FROM changes WHERE id BETWEEN ? AND ?').run(first, last);
    store.sqlite.prepare('DELETE FROM quarantine WHERE packet = ? AND entity = ?').run(packet, entity);
    const summary = await readJsonDump(
      options.archivePath,
      { packet, entity, signal: options.signal },
      (line, n) => {
        row.id = changeId(packet, entity, n);
        row.position = n;
        row.line = line;
        if (statements.insert.run(row).changes === 1) {
          changeCount++;
          return;
        }
        const diagnosis = diagnoseLine(line);
        if (diagnosis.ok) {
          statements.insertChecked.run({ ...row, line: diagnosis.json, mbid: diagnosis.mbid });
          changeCount++;
        } else {
          statements.quarantine.run(packet, entity, n, line, diagnosis.reason);
          quarantineCount++;
        }
      },
    );
    recordDump(store, options, { changeCount, quarantineCount, now, metadata: summary.metadata });
    options.beforeCommit?.();
    return { ...summary, changeCount, quarantineCount };
  });
}

function recordDump(
  store: Store,
  options: IngestJsonDumpOptions,
  facts: { changeCount: number; quarantineCount: number; now: string; metadata: JsonDumpMetadata },
): void {
  const { packet, entity, file } = options;
  if (file) upsertFeedFile(store, file);
  store.sqlite
    .prepare(
      `INSERT INTO dumps (packet, entity, status, change_count, quarantine_count, file_name, error, attempts, checked_at, updated_at)
       VALUES (?, ?, 'SYNCED', ?, ?, ?, NULL, 0, NULL, ?)
       ON CONFLICT (packet, entity) DO UPDATE SET status = 'SYNCED', change_count = excluded.change_count,
         quarantine_count = excluded.quarantine_count, file_name = excluded.file_name, error = NULL,
         next_retry_at = NULL, updated_at = excluded.updated_at`,
    )
    .run(packet, entity, facts.changeCount, facts.quarantineCount, file?.name ?? null, facts.now);
  recordPacketMetadata(store, packet, facts.metadata, facts.now);
}

/** Inserts or replaces the `feed_files` row of `file`. */
export function upsertFeedFile(store: Store, file: FeedFileRecord): void {
  store.sqlite
    .prepare(
      `INSERT OR REPLACE INTO feed_files (name, packet, size, sha256, signature, fingerprint, fetched_at, stored_path, signature_stored_path)
       VALUES (@name, @packet, @size, @sha256, @signature, @fingerprint, @fetchedAt, @storedPath, @signatureStoredPath)`,
    )
    .run(file);
}

/**
 * Sets a packet's TIMESTAMP and schema sequence from an archive when not yet known, creating the
 * packet row when needed. A schema sequence that differs from the previous packet's is recorded as
 * a `schema-change` event (upstream changes it about once a year; the JSON store keeps working).
 */
export function recordPacketMetadata(
  store: Store,
  packet: number,
  metadata: { timestamp: string; schemaSequence: number },
  now: string,
): void {
  const db = store.sqlite;
  db.prepare('INSERT INTO packets (number, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING').run(
    packet,
    now,
  );
  const current = db.prepare('SELECT schema_sequence AS s FROM packets WHERE number = ?').get(packet) as {
    s: number | null;
  };
  db.prepare(
    'UPDATE packets SET timestamp = coalesce(timestamp, ?), schema_sequence = coalesce(schema_sequence, ?) WHERE number = ?',
  ).run(metadata.timestamp, metadata.schemaSequence, packet);
  if (current.s !== null) return;
  const previous = db
    .prepare(
      'SELECT number, schema_sequence AS s FROM packets WHERE number < ? AND schema_sequence IS NOT NULL ORDER BY number DESC LIMIT 1',
    )
    .get(packet) as { number: number; s: number } | undefined;
  if (previous && previous.s !== metadata.schemaSequence) {
    db.prepare('INSERT INTO events (at, packet, kind, message) VALUES (?, ?, ?, ?)').run(
      now,
      packet,
      'schema-change',
      `schema sequence changed from ${previous.s} (packet ${previous.number}) to ${metadata.schemaSequence} (packet ${packet})`,
    );
  }
}

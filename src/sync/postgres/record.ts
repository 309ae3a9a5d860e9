import type pg from 'pg';
import type { JsonDumpMetadata } from '../../feed/jsonDump.js';
import type { StoredCopy } from '../dumpCopy.js';
import type { FeedFileRecord } from '../ingest.js';
import { EXPECTED_JSON_DUMPS_SCHEMA_NUMBER, type SchemaChange } from '../packetFacts.js';
import { recordEventsWriteOn } from './feedServed.js';

/**
 * The bookkeeping of one stored JSON dump on PostgreSQL, in the dump's transaction: the PostgreSQL
 * dialect of sync/ingest.ts `recordDump` and sync/packetFacts.ts (the same rows, the same rules).
 * Times are ISO 8601 text, as in SQLite (db/postgres/schema.ts): a time parameter is cast to
 * text, never to `timestamptz`, which would store it reformatted.
 */

/** A refused line of the dump, kept with the reason (nothing is dropped silently). */
export interface QuarantinedLine {
  line: number;
  raw: Buffer;
  reason: string;
}

/** Deletes an earlier copy of the dump (re-runs replace it, never add it twice). */
export async function deleteDumpCopy(
  client: pg.ClientBase,
  dump: { packet: number; entity: string; first: number; last: number },
): Promise<void> {
  await client.query('DELETE FROM changes WHERE id BETWEEN $1 AND $2', [dump.first, dump.last]);
  await client.query('DELETE FROM quarantine WHERE packet = $1 AND entity = $2', [dump.packet, dump.entity]);
}

/**
 * sync/dumpCopy.ts `storedCopy` on PostgreSQL, computed by the server in one pass: md5 of each
 * line, then of each chunk of 2^20 ids, then of the chunks in order (one string of every row would
 * pass PostgreSQL's 1 GB limit for a full recording dump).
 */
export async function storedCopyOn(client: pg.ClientBase, first: number, last: number): Promise<StoredCopy> {
  const { rows } = await client.query<{ count: number; digest: string | null }>(
    `SELECT coalesce(sum(c), 0)::bigint AS count, md5(string_agg(h, ',' ORDER BY k)) AS digest FROM (
       SELECT id >> 20 AS k, count(*) AS c, md5(string_agg(id::text || ':' || md5(data), ',' ORDER BY id)) AS h
       FROM changes WHERE id BETWEEN $1 AND $2 GROUP BY 1) chunks`,
    [first, last],
  );
  return { count: Number(rows[0]?.count ?? 0), digest: rows[0]?.digest ?? '' };
}

/** Stores quarantined lines, their bytes exactly (`bytea`), in one statement. */
export async function insertQuarantine(
  client: pg.ClientBase,
  dump: { packet: number; entity: string },
  lines: readonly QuarantinedLine[],
): Promise<void> {
  if (lines.length === 0) return;
  await client.query(
    `INSERT INTO quarantine (packet, entity, line, raw, reason)
     SELECT $1::integer, $2::text, q.line, q.raw, q.reason FROM unnest($3::integer[], $4::bytea[], $5::text[]) AS q (line, raw, reason)`,
    [dump.packet, dump.entity, lines.map((q) => q.line), lines.map((q) => q.raw), lines.map((q) => q.reason)],
  );
}

/** Facts of a stored dump for {@link recordDump}. */
export interface DumpFacts {
  packet: number;
  entity: string;
  file: FeedFileRecord | null;
  changeCount: number;
  quarantineCount: number;
  metadata: JsonDumpMetadata;
  /** ISO 8601. */
  now: string;
  /** The dump replaced a copy behind the stream with the same changes: no rewrite is recorded. */
  unchanged?: boolean;
}

/**
 * Records the dump as SYNCED with its counts, its feed file, its packet's TIMESTAMP and schema
 * sequence (a schema sequence change and an unexpected JSON_DUMPS_SCHEMA_NUMBER become events,
 * once per packet), as sync/ingest.ts does on SQLite.
 */
export async function recordDump(client: pg.ClientBase, facts: DumpFacts): Promise<void> {
  const { packet, entity, file, now } = facts;
  if (!facts.unchanged) await recordEventsWriteOn(client, packet);
  if (file) await upsertFeedFile(client, file);
  await client.query(
    `INSERT INTO dumps (packet, entity, status, change_count, quarantine_count, file_name, error, attempts, checked_at, updated_at)
     VALUES ($1, $2, 'SYNCED', $3, $4, $5, NULL, 0, NULL, $6)
     ON CONFLICT (packet, entity) DO UPDATE SET status = 'SYNCED', change_count = excluded.change_count,
       quarantine_count = excluded.quarantine_count, file_name = excluded.file_name, error = NULL,
       next_retry_at = NULL, settled_by = NULL, signature_missing_since = NULL, updated_at = excluded.updated_at`,
    [packet, entity, facts.changeCount, facts.quarantineCount, file?.name ?? null, now],
  );
  await recordPacketFacts(client, packet, facts.metadata, now);
  const number = facts.metadata.jsonDumpsSchemaNumber;
  if (number !== null && number !== EXPECTED_JSON_DUMPS_SCHEMA_NUMBER) {
    const message =
      `JSON dump ${entity} of packet ${packet} has JSON_DUMPS_SCHEMA_NUMBER ${number}, ` +
      `expected ${EXPECTED_JSON_DUMPS_SCHEMA_NUMBER}: the line format may have changed`;
    await recordEventOnce(client, { packet, kind: 'json-dump-schema', message }, now);
  }
}

/** Inserts or replaces the `feed_files` row of `file`. */
export async function upsertFeedFile(client: pg.ClientBase, file: FeedFileRecord): Promise<void> {
  await client.query(
    `INSERT INTO feed_files (name, packet, size, sha256, signature, fingerprint, fetched_at, stored_path, signature_stored_path)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (name) DO UPDATE SET packet = excluded.packet, size = excluded.size, sha256 = excluded.sha256,
       signature = excluded.signature, fingerprint = excluded.fingerprint, fetched_at = excluded.fetched_at,
       stored_path = excluded.stored_path, signature_stored_path = excluded.signature_stored_path`,
    [
      file.name,
      file.packet,
      file.size,
      file.sha256,
      file.signature,
      file.fingerprint,
      file.fetchedAt,
      file.storedPath,
      file.signatureStoredPath,
    ],
  );
}

/**
 * The packet's row with its TIMESTAMP and schema sequence where still empty; a schema sequence that
 * differs from the nearest earlier packet's is returned and recorded once as an event
 * (sync/packetFacts.ts recordPacketFacts).
 */
export async function recordPacketFacts(
  client: pg.ClientBase,
  packet: number,
  facts: { timestamp: string; schemaSequence: number },
  at: string,
): Promise<SchemaChange | null> {
  await client.query(
    `INSERT INTO packets (number, timestamp, schema_sequence, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (number) DO UPDATE SET
       timestamp = coalesce(packets.timestamp, excluded.timestamp),
       schema_sequence = coalesce(packets.schema_sequence, excluded.schema_sequence)`,
    [packet, facts.timestamp, facts.schemaSequence, at],
  );
  const { rows } = await client.query<{ number: number; schemaSequence: number }>(
    `SELECT number, schema_sequence AS "schemaSequence" FROM packets
     WHERE number < $1 AND schema_sequence IS NOT NULL ORDER BY number DESC LIMIT 1`,
    [packet],
  );
  const previous = rows[0];
  if (!previous || previous.schemaSequence === facts.schemaSequence) return null;
  const message = `schema sequence changed from ${previous.schemaSequence} (packet ${previous.number}) to ${facts.schemaSequence} at packet ${packet}`;
  await recordEventOnce(client, { packet, kind: 'schema-change', message }, at);
  return { from: previous.schemaSequence, to: facts.schemaSequence, previousPacket: previous.number };
}

/** Adds an `events` row of `kind` for `packet` unless that packet has one of that kind already. */
async function recordEventOnce(
  client: pg.ClientBase,
  event: { packet: number; kind: 'schema-change' | 'json-dump-schema'; message: string },
  at: string,
): Promise<void> {
  await client.query(
    `INSERT INTO events (at, packet, kind, message) SELECT $1::text, $2::integer, $3::text, $4::text
     WHERE NOT EXISTS (SELECT 1 FROM events WHERE packet = $2 AND kind = $3)`,
    [at, event.packet, event.kind, event.message],
  );
}

import type Database from 'better-sqlite3';
import { cachedOn } from '../db/statements.js';

/** A schema sequence that differs from the previous packet's (FEED.md: it changes about once a year). */
export interface SchemaChange {
  from: number;
  to: number;
  previousPacket: number;
}

/**
 * Records what an archive (JSON dump or replication packet) says of its packet: creates the
 * `packets` row when missing and fills its TIMESTAMP (ISO 8601) and schema sequence where still
 * empty. A schema sequence that differs from the nearest earlier packet's is returned and recorded
 * once as a `schema-change` event: an event, not a crash, so the store keeps working across it.
 */
export function recordPacketFacts(
  sqlite: Database.Database,
  packet: number,
  facts: { timestamp: string; schemaSequence: number },
  at: string,
): SchemaChange | null {
  cachedOn(
    sqlite,
    `INSERT INTO packets (number, timestamp, schema_sequence, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (number) DO UPDATE SET
         timestamp = coalesce(packets.timestamp, excluded.timestamp),
         schema_sequence = coalesce(packets.schema_sequence, excluded.schema_sequence)`,
  ).run(packet, facts.timestamp, facts.schemaSequence, at);
  const previous = cachedOn(
    sqlite,
    `SELECT number, schema_sequence AS schemaSequence FROM packets
       WHERE number < ? AND schema_sequence IS NOT NULL ORDER BY number DESC LIMIT 1`,
  ).get(packet) as { number: number; schemaSequence: number } | undefined;
  if (!previous || previous.schemaSequence === facts.schemaSequence) return null;
  const message = `schema sequence changed from ${previous.schemaSequence} (packet ${previous.number}) to ${facts.schemaSequence} at packet ${packet}`;
  recordEventOnce(sqlite, { packet, kind: 'schema-change', message }, at);
  return { from: previous.schemaSequence, to: facts.schemaSequence, previousPacket: previous.number };
}

/** The JSON dump schema number upstream writes (FEED.md, JSON dump archives). */
export const EXPECTED_JSON_DUMPS_SCHEMA_NUMBER = 1;

/**
 * Records a JSON dump whose `JSON_DUMPS_SCHEMA_NUMBER` is not {@link EXPECTED_JSON_DUMPS_SCHEMA_NUMBER}
 * as a `json-dump-schema` event of its packet, once per packet: an event, like a schema
 * sequence change, so the store keeps working while an operator looks at the new format. Returns
 * true when the number is unexpected (null, a missing member, is not: older archives lack it).
 */
export function recordJsonDumpSchemaNumber(
  sqlite: Database.Database,
  dump: { packet: number; entity: string; number: number | null },
  at: string,
): boolean {
  if (dump.number === null || dump.number === EXPECTED_JSON_DUMPS_SCHEMA_NUMBER) return false;
  const message =
    `JSON dump ${dump.entity} of packet ${dump.packet} has JSON_DUMPS_SCHEMA_NUMBER ${dump.number}, ` +
    `expected ${EXPECTED_JSON_DUMPS_SCHEMA_NUMBER}: the line format may have changed`;
  recordEventOnce(sqlite, { packet: dump.packet, kind: 'json-dump-schema', message }, at);
  return true;
}

/** Adds an `events` row of `kind` for `packet` unless that packet has one of that kind already. */
function recordEventOnce(
  sqlite: Database.Database,
  event: { packet: number; kind: 'schema-change' | 'json-dump-schema'; message: string },
  at: string,
): void {
  cachedOn(
    sqlite,
    `INSERT INTO events (at, packet, kind, message) SELECT ?, ?, ?, ?
       WHERE NOT EXISTS (SELECT 1 FROM events WHERE packet = ? AND kind = ?)`,
  ).run(at, event.packet, event.kind, event.message, event.packet, event.kind);
}

/**
 * The PostgreSQL layout (drizzle, issue 17): table by table and column by column the SQLite layout
 * of src/db/schema.ts, with the same names; what each column means is written there. The types are
 * PostgreSQL's own where SQLite has one storage class for all:
 * - times stay ISO 8601 UTC text, as in SQLite: both stores must give byte-identical answers, and a
 *   database holds two precisions (archive TIMESTAMPs with microseconds, livefeed's own times with
 *   milliseconds), which `timestamptz` would not give back as written. Each column holds one format,
 *   so text order is time order; SQL users cast them (`timestamp::timestamptz`);
 * - `bigint` where a value can pass 2^31: change ids (db/keys.ts packs packet, entity type and
 *   position into up to 53 bits), archive sizes, upstream's seqid and xid, lifetime counters. The
 *   store's pool reads `bigint` as a JS number (all of them are safe integers) - see
 *   db/postgres/client.ts;
 * - `changes.data` is `text`: the line exactly as received (valid UTF-8, checked by the ingest;
 *   jsonb would reorder keys and drop whitespace);
 * - `quarantine.raw` is `bytea`: the refused line's bytes exactly, which may hold a NUL or invalid
 *   UTF-8 that PostgreSQL text refuses (SQLite keeps the line decoded as UTF-8 with U+FFFD);
 * - JSON documents that livefeed itself writes (row changes' keys and data, a webhook's entity
 *   types and MBIDs) are `jsonb`.
 * The search index and the row changes' expression index are a custom migration
 * (drizzle/postgres/0001_search_and_entity_row.sql; the document's expression made again by 0004), as in SQLite.
 */

import { bigint, customType, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/** An ISO 8601 UTC time as text (see above). */
const time = (name: string) => text(name);
/** `bigint` read as a JS number: every value livefeed writes is a safe integer. */
const big = (name: string) => bigint(name, { mode: 'number' });
/** `bytea` as a Buffer. */
const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' });

export const packets = pgTable(
  'packets',
  {
    number: integer('number').primaryKey(),
    timestamp: time('timestamp'),
    schemaSequence: integer('schema_sequence'),
    syncedAt: time('synced_at'),
    createdAt: time('created_at').notNull(),
    dumpsSeenAt: time('dumps_seen_at'),
  },
  (t) => [index('packets_synced_at').on(t.syncedAt, t.number)],
);

export const dumps = pgTable(
  'dumps',
  {
    packet: integer('packet').notNull(),
    entity: text('entity').notNull(),
    status: text('status').notNull(),
    changeCount: integer('change_count').notNull().default(0),
    quarantineCount: integer('quarantine_count').notNull().default(0),
    fileName: text('file_name'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    checkedAt: time('checked_at'),
    nextRetryAt: time('next_retry_at'),
    settledBy: text('settled_by'),
    signatureMissingSince: time('signature_missing_since'),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.packet, t.entity] }),
    index('dumps_status').on(t.status, t.settledBy, t.packet),
  ],
);

/**
 * One JSON dump line; `id` as in SQLite (db/keys.ts): a dump is one contiguous id range.
 * `changes_mbid` is on (mbid, id): SQLite's index on mbid ends with the rowid (the id) by itself, so
 * the newest line of an MBID, its previous version and its history pages are one seek there; here
 * the id must be named for the same seeks (an index on mbid alone reads every version and sorts).
 */
export const changes = pgTable(
  'changes',
  {
    id: big('id').primaryKey(),
    packet: integer('packet').notNull(),
    entity: text('entity').notNull(),
    position: integer('position').notNull(),
    mbid: text('mbid').notNull(),
    data: text('data').notNull(),
  },
  (t) => [index('changes_mbid').on(t.mbid, t.id)],
);

export const quarantine = pgTable(
  'quarantine',
  {
    packet: integer('packet').notNull(),
    entity: text('entity').notNull(),
    line: integer('line').notNull(),
    raw: bytea('raw').notNull(),
    reason: text('reason').notNull(),
  },
  (t) => [primaryKey({ columns: [t.packet, t.entity, t.line] })],
);

export const feedFiles = pgTable(
  'feed_files',
  {
    name: text('name').primaryKey(),
    packet: integer('packet').notNull(),
    size: big('size').notNull(),
    sha256: text('sha256').notNull(),
    signature: text('signature').notNull(),
    fingerprint: text('fingerprint'),
    fetchedAt: time('fetched_at').notNull(),
    storedPath: text('stored_path'),
    signatureStoredPath: text('signature_stored_path'),
  },
  (t) => [index('feed_files_packet').on(t.packet)],
);

export const replicationPackets = pgTable(
  'replication_packets',
  {
    packet: integer('packet').primaryKey(),
    status: text('status').notNull(),
    format: text('format'),
    schemaSequence: integer('schema_sequence'),
    timestamp: time('timestamp'),
    dbmirrorVersion: integer('dbmirror_version'),
    rowCount: integer('row_count').notNull().default(0),
    fileName: text('file_name'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    nextRetryAt: time('next_retry_at'),
    missingSince: time('missing_since'),
    signatureMissingSince: time('signature_missing_since'),
    updatedAt: time('updated_at').notNull(),
  },
  (t) => [index('replication_packets_status').on(t.status, t.packet)],
);

export const rowChanges = pgTable(
  'row_changes',
  {
    packet: integer('packet').notNull(),
    ord: integer('ord').notNull(),
    seqid: big('seqid').notNull(),
    xid: big('xid').notNull(),
    tableName: text('table_name').notNull(),
    op: text('op').notNull(),
    keys: jsonb('keys'),
    oldData: jsonb('old_data'),
    newData: jsonb('new_data'),
    timestamp: time('timestamp'),
  },
  (t) => [
    primaryKey({ columns: [t.packet, t.ord] }),
    index('row_changes_table').on(t.packet, t.tableName, t.ord, t.op),
    // `row_changes_entity_row` (an expression index) is in the custom migration, as in SQLite.
  ],
);

export const removals = pgTable(
  'removals',
  {
    mbid: text('mbid').notNull(),
    entity: text('entity').notNull(),
    packet: integer('packet').notNull(),
    kind: text('kind').notNull(),
    mergedInto: text('merged_into'),
  },
  (t) => [
    primaryKey({ columns: [t.packet, t.mbid, t.kind] }),
    index('removals_mbid').on(t.mbid, t.packet, t.kind),
    index('removals_entity').on(t.entity, t.packet, t.mbid, t.kind),
  ],
);

export const events = pgTable('events', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  at: time('at').notNull(),
  packet: integer('packet'),
  kind: text('kind').notNull(),
  message: text('message').notNull(),
});

/**
 * Who holds the writer lock. On PostgreSQL the lock itself is a session advisory lock
 * (sync/postgres/lock.ts); this row only names its holder for the "another writer" message.
 */
export const syncLock = pgTable('sync_lock', {
  id: integer('id').primaryKey(),
  pid: integer('pid').notNull(),
  host: text('host').notNull(),
  acquiredAt: time('acquired_at').notNull(),
  heartbeatAt: time('heartbeat_at').notNull(),
});

export const meta = pgTable('meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

export const webhooks = pgTable('webhooks', {
  name: text('name').primaryKey(),
  url: text('url').notNull(),
  entities: jsonb('entities'),
  mbids: jsonb('mbids'),
  cursor: text('cursor'),
  deliveredPacket: integer('delivered_packet'),
  attempts: integer('attempts').notNull().default(0),
  lastError: text('last_error'),
  lastErrorAt: time('last_error_at'),
  nextRetryAt: time('next_retry_at'),
  lastAttemptAt: time('last_attempt_at'),
  lastSuccessAt: time('last_success_at'),
  deliveredEvents: big('delivered_events').notNull().default(0),
  deliveries: big('deliveries').notNull().default(0),
  failedDeliveries: big('failed_deliveries').notNull().default(0),
  addedAt: time('added_at').notNull(),
  retiredAt: time('retired_at'),
});

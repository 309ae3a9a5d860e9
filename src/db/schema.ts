/**
 * The SQLite layout (drizzle). Times are ISO 8601 UTC text; packet numbers are replication
 * sequences; entity types use upstream spelling (`release-group`).
 */

import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** One row per packet (replication sequence) the sync has touched. */
export const packets = sqliteTable(
  'packets',
  {
    number: integer('number').primaryKey(),
    /** Archive `TIMESTAMP` as ISO 8601, from the first JSON dump or replication packet read. */
    timestamp: text('timestamp'),
    schemaSequence: integer('schema_sequence'),
    /** When every tracked file of the packet became terminal; null while any is pending or failed. */
    syncedAt: text('synced_at'),
    createdAt: text('created_at').notNull(),
    /**
     * When a probe first found a JSON dump of this packet of an entity type the sync does not track
     * (`--entities`; sync/evidence.ts): evidence that earlier packets' 404s mean no changes.
     */
    dumpsSeenAt: text('dumps_seen_at'),
  },
  // The first incomplete packet (synced_at IS NULL, then number) and the packets completed since a
  // time (the packetSynced watch) without reading every packet.
  (t) => [index('packets_synced_at').on(t.syncedAt, t.number)],
);

/** Status of one JSON dump (packet, entity type). */
export const dumps = sqliteTable(
  'dumps',
  {
    packet: integer('packet').notNull(),
    entity: text('entity').notNull(),
    /** SYNCED | NO_CHANGES | PENDING | FAILED */
    status: text('status').notNull(),
    changeCount: integer('change_count').notNull().default(0),
    quarantineCount: integer('quarantine_count').notNull().default(0),
    /** Feed-root-relative file name, set once the archive was downloaded. */
    fileName: text('file_name'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    /** Time of the last 404 seen for this dump (settling, FEED.md, Errors). */
    checkedAt: text('checked_at'),
    nextRetryAt: text('next_retry_at'),
    /**
     * How a NO_CHANGES dump was settled: `LATER_DUMP` (a later packet's JSON dump was seen, FEED.md,
     * Errors) or `TIME` (`--settle-after`; asked again once a later dump is seen).
     */
    settledBy: text('settled_by'),
    /** First time the archive was there but its `.asc` was not (404), while that lasts. */
    signatureMissingSince: text('signature_missing_since'),
    updatedAt: text('updated_at').notNull(),
  },
  // By status, then how it was settled, then packet: the failures and pending views, the oldest
  // PENDING packet and the time-settled dumps to ask again, each without reading every dump.
  (t) => [
    primaryKey({ columns: [t.packet, t.entity] }),
    index('dumps_status').on(t.status, t.settledBy, t.packet),
  ],
);

/**
 * One line of a JSON dump. `id` encodes (packet, entity index, position) so that a dump's lines are
 * one contiguous rowid range in file order (see db/keys.ts); `data` is the line exactly as received.
 */
export const changes = sqliteTable(
  'changes',
  {
    id: integer('id').primaryKey(),
    packet: integer('packet').notNull(),
    entity: text('entity').notNull(),
    /** 1-based line number in `mbdump/<entity>`. */
    position: integer('position').notNull(),
    mbid: text('mbid').notNull(),
    data: text('data').notNull(),
    /**
     * The line's name as `EntityChange.name` gives it (`name`, else `title`), taken from the
     * ingest's one-pass check, so that a page of search hits needs no JSON parse of its lines
     * (db/searchQueries.ts): the text; an empty BLOB when the line has none (a number would
     * become text: the column's affinity); NULL when not known (a line stored before migration
     * 0011, or one the ingest re-escaped), read from `data` then.
     */
    name: text('name'),
  },
  (t) => [index('changes_mbid').on(t.mbid)],
);

/** Lines that could not be stored as changes, kept with the reason (nothing is dropped silently). */
export const quarantine = sqliteTable(
  'quarantine',
  {
    packet: integer('packet').notNull(),
    entity: text('entity').notNull(),
    line: integer('line').notNull(),
    raw: text('raw').notNull(),
    reason: text('reason').notNull(),
  },
  (t) => [primaryKey({ columns: [t.packet, t.entity, t.line] })],
);

/** Every archive fetched from the feed, keyed by its path under the feed root. */
export const feedFiles = sqliteTable(
  'feed_files',
  {
    name: text('name').primaryKey(),
    packet: integer('packet').notNull(),
    size: integer('size').notNull(),
    sha256: text('sha256').notNull(),
    /** VERIFIED | UNVERIFIED | INVALID | MISSING */
    signature: text('signature').notNull(),
    fingerprint: text('fingerprint'),
    fetchedAt: text('fetched_at').notNull(),
    /** Path of the kept copy relative to the data directory; null when not kept. */
    storedPath: text('stored_path'),
    signatureStoredPath: text('signature_stored_path'),
  },
  (t) => [index('feed_files_packet').on(t.packet)],
);

/** The replication packet of one packet number (row-level changes). */
export const replicationPackets = sqliteTable(
  'replication_packets',
  {
    packet: integer('packet').primaryKey(),
    /** SYNCED | PENDING (404 so far) | MISSING (404 for an hour while a later packet exists) | FAILED */
    status: text('status').notNull(),
    /** V1 | V2, from the archive members */
    format: text('format'),
    schemaSequence: integer('schema_sequence'),
    timestamp: text('timestamp'),
    dbmirrorVersion: integer('dbmirror_version'),
    rowCount: integer('row_count').notNull().default(0),
    fileName: text('file_name'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    nextRetryAt: text('next_retry_at'),
    /** First 404 of the archive while it is PENDING or MISSING (FEED.md, Errors: never skip a packet). */
    missingSince: text('missing_since'),
    /** First time the archive was there but its `.asc` was not (404), while that lasts. */
    signatureMissingSince: text('signature_missing_since'),
    updatedAt: text('updated_at').notNull(),
  },
  // failures, /metrics and status count or list by status; the newest SYNCED one bounds removals.
  (t) => [index('replication_packets_status').on(t.status, t.packet)],
);

/**
 * `musicbrainz.<table>` of the eleven entity types (FEED.md, Replication packet archives), spelled
 * out as the WHERE term of the partial index `row_changes_entity_row`; queries repeat this exact
 * term so that SQLite uses the index.
 */
export const ENTITY_ROW_TABLES_SQL =
  "table_name IN ('musicbrainz.area', 'musicbrainz.artist', 'musicbrainz.event', 'musicbrainz.instrument', " +
  "'musicbrainz.label', 'musicbrainz.place', 'musicbrainz.recording', 'musicbrainz.release', " +
  "'musicbrainz.release_group', 'musicbrainz.series', 'musicbrainz.work')";

/**
 * The row id of an entity table's row change as text (v1 values are text, v2 JSON numbers): the
 * indexed expression of `row_changes_entity_row`, finding an entity row by id across all packets
 * (a merge's target MBID, a v1 deletion's MBID) without scanning every stored row change.
 */
export const ENTITY_ROW_ID_SQL = "CAST(coalesce(new_data ->> 'id', old_data ->> 'id') AS TEXT)";

/** One row change of a replication packet, in upstream's apply order (`ord`). */
export const rowChanges = sqliteTable(
  'row_changes',
  {
    packet: integer('packet').notNull(),
    ord: integer('ord').notNull(),
    seqid: integer('seqid').notNull(),
    xid: integer('xid').notNull(),
    /** `schema.table`, unquoted */
    tableName: text('table_name').notNull(),
    /** i | u | d */
    op: text('op').notNull(),
    keys: text('keys'),
    oldData: text('old_data'),
    newData: text('new_data'),
    timestamp: text('timestamp'),
  },
  (t) => [
    primaryKey({ columns: [t.packet, t.ord] }),
    // One table's rows of a packet in apply order (GraphQL `rowChanges(table:)` pages seek on ord);
    // `op` last makes it covering for the per-table counts and op filters.
    index('row_changes_table').on(t.packet, t.tableName, t.ord, t.op),
    // Also `row_changes_entity_row` on (table_name, ENTITY_ROW_ID_SQL) WHERE ENTITY_ROW_TABLES_SQL,
    // created by the custom migration drizzle/sqlite/0001_row_changes_entity_row.sql: drizzle-kit splits
    // expression index columns at commas and writes broken SQL, so it is not declared here.
  ],
);

/**
 * Entities deleted or merged away, derived from replication packets. With `changes_mbid` it is the
 * current state (src/db/currentQueries.ts): the newest removal of an MBID against its newest line.
 */
export const removals = sqliteTable(
  'removals',
  {
    mbid: text('mbid').notNull(),
    entity: text('entity').notNull(),
    packet: integer('packet').notNull(),
    /** DELETED | MERGED */
    kind: text('kind').notNull(),
    mergedInto: text('merged_into'),
  },
  // Pages of `removals(entity:)` seek on (entity, packet, mbid, kind), the primary key's order.
  (t) => [
    primaryKey({ columns: [t.packet, t.mbid, t.kind] }),
    index('removals_mbid').on(t.mbid, t.packet, t.kind),
    index('removals_entity').on(t.entity, t.packet, t.mbid, t.kind),
  ],
);

/** Notable sync events (schema sequence changes, ...), newest last. */
export const events = sqliteTable('events', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  at: text('at').notNull(),
  packet: integer('packet'),
  kind: text('kind').notNull(),
  message: text('message').notNull(),
});

/** Single-row writer lock: which sync process holds the database. */
export const syncLock = sqliteTable('sync_lock', {
  id: integer('id').primaryKey(),
  pid: integer('pid').notNull(),
  host: text('host').notNull(),
  acquiredAt: text('acquired_at').notNull(),
  heartbeatAt: text('heartbeat_at').notNull(),
});

/** Key/value facts about this database (for example `demo` = `true`). */
export const meta = sqliteTable('meta', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

/**
 * One row per webhook (README, Webhooks), named as in the webhooks file: where its delivery stands
 * in the change stream and how its last attempts went. Never holds the secret or the URL's
 * credentials or query (`url` is the URL without them). Times are ISO 8601 UTC.
 */
export const webhooks = sqliteTable('webhooks', {
  name: text('name').primaryKey(),
  url: text('url').notNull(),
  /** Entity types sent, as a JSON array in upstream spelling; null: all. */
  entities: text('entities'),
  /** MBIDs sent, as a JSON array; null: all. */
  mbids: text('mbids'),
  /**
   * Change stream position (db/feedPosition.ts, as text) after the last event a 2xx acknowledged,
   * or where the webhook started (after the newest packet the stream served when it was added);
   * null: from the start of the history held.
   */
  cursor: text('cursor'),
  /** Newest packet whose matching events were all acknowledged (db/webhookQueries.ts packetDoneAt). */
  deliveredPacket: integer('delivered_packet'),
  /** Failed attempts since the last 2xx. */
  attempts: integer('attempts').notNull().default(0),
  lastError: text('last_error'),
  lastErrorAt: text('last_error_at'),
  /** When follow mode tries again after a failure (`sync --once` tries at once). */
  nextRetryAt: text('next_retry_at'),
  lastAttemptAt: text('last_attempt_at'),
  lastSuccessAt: text('last_success_at'),
  /** Events acknowledged (2xx), over the webhook's life. */
  deliveredEvents: integer('delivered_events').notNull().default(0),
  /** POSTs answered 2xx, over the webhook's life. */
  deliveries: integer('deliveries').notNull().default(0),
  /** POSTs that failed (not 2xx, refused, timed out), over the webhook's life. */
  failedDeliveries: integer('failed_deliveries').notNull().default(0),
  addedAt: text('added_at').notNull(),
  /** Set when a sync ran with a webhooks file that no longer lists it; cleared when it is back. */
  retiredAt: text('retired_at'),
});

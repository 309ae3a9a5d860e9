import type { Database, Statement } from 'better-sqlite3';
import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { changeKey } from './keys.js';
import type { ChangeRow } from './queries.js';
import { cachedStatement } from './statements.js';

/**
 * The current state (`current_state`, issue 14): per MBID its newest known version. Writers call
 * the two upserts inside the transaction that stores a JSON dump or a replication packet, so the
 * current state never runs ahead of or behind the stored changes. Order is by packet; within one
 * packet a removal wins over a JSON dump line (a JSON dump never shows a removed entity, FEED.md),
 * and a later line of the same packet wins over an earlier one (change ids grow with the position).
 */

/** CURRENT: the newest version is a JSON dump line; DELETED / MERGED: a replication packet removed it. */
export type CurrentStatus = 'CURRENT' | 'DELETED' | 'MERGED';

/** A `current_state` row, with the newest change when a JSON dump held the MBID. */
export interface CurrentRow {
  mbid: string;
  entity: EntityType;
  status: CurrentStatus;
  /** Packet of the newest event (JSON dump line or removal). */
  packet: number;
  /** For MERGED: the MBID it was merged into, when a stored packet shows it; else null. */
  mergedInto: string | null;
  /** The newest JSON dump line of the MBID (kept after a removal); null when no JSON dump held it. */
  latest: ChangeRow | null;
}

// Rows of `changes` in a rowid range become the MBID's newest version when their id is the
// largest (ids grow with packet, then position, within an entity type); they make it CURRENT only
// when their packet is newer than the one that removed it, so a JSON dump stored after a later
// packet's deletion leaves it deleted. ORDER BY +mbid (sorted, not read through the MBID index):
// the B-tree of random UUIDs is written in key order; then id: of two lines of one MBID, the later wins.
// `WHERE` before ON CONFLICT also settles SQLite's upsert parsing ambiguity (sqlite.org/lang_upsert).
const UPSERT_CHANGES = `
  INSERT INTO current_state (mbid, entity, status, change_id, packet, merged_into)
  SELECT mbid, entity, 'CURRENT', id, packet, NULL FROM changes WHERE id BETWEEN ? AND ? ORDER BY +mbid, id
  ON CONFLICT (mbid) DO UPDATE SET entity = excluded.entity, change_id = excluded.change_id,
    status = iif(excluded.packet > current_state.packet, 'CURRENT', current_state.status),
    merged_into = iif(excluded.packet > current_state.packet, NULL, current_state.merged_into),
    packet = max(excluded.packet, current_state.packet)
  WHERE excluded.change_id >= coalesce(current_state.change_id, 0)`;

// The removals of one packet win over anything of the same or an earlier packet; the newest
// JSON dump line stays referenced (`Entity.latest` shows the last version before the removal).
// The same statement (over all packets) fills the table in drizzle/0004_current_state.sql.
const UPSERT_REMOVALS = `
  INSERT INTO current_state (mbid, entity, status, change_id, packet, merged_into)
  SELECT mbid, entity, kind, NULL, packet, merged_into FROM removals WHERE packet = ? ORDER BY kind
  ON CONFLICT (mbid) DO UPDATE SET status = excluded.status, packet = excluded.packet,
    merged_into = excluded.merged_into
  WHERE excluded.packet >= current_state.packet`;

/**
 * The prepared upsert that makes the changes with rowids `first..last` current (see the module
 * comment for the order). Prepare once per JSON dump; run once, after its last INSERT.
 */
export function prepareCurrentFromChanges(db: Database): Statement<[number, number]> {
  return db.prepare(UPSERT_CHANGES);
}

/**
 * Marks the MBIDs that replication packet `packet` deleted or merged away (its `removals` rows,
 * already written) as DELETED / MERGED, unless a newer packet's JSON dump already shows them.
 * Run in the packet's transaction.
 */
export function applyRemovalsToCurrent(db: Database, packet: number): void {
  db.prepare(UPSERT_REMOVALS).run(packet);
}

const CURRENT_COLUMNS = `s.mbid, s.entity, s.status, s.packet, s.merged_into AS mergedInto, s.change_id AS changeId,
  CAST(c.data AS BLOB) AS data`;

interface RawCurrentRow extends Omit<CurrentRow, 'latest'> {
  changeId: number | null;
  data: Buffer | null;
}

function currentRowOf(raw: RawCurrentRow): CurrentRow {
  const { changeId, data, ...rest } = raw;
  // A change row can be missing only if it was replaced by a re-import that no longer holds the line.
  if (changeId === null || data === null) return { ...rest, latest: null };
  const { packet, entity, position } = changeKey(changeId);
  return { ...rest, latest: { id: changeId, packet, entity, position, mbid: raw.mbid, data } };
}

/** The current state of `mbid` (lower case): one primary key read plus its newest change; undefined when not held. */
export function currentOfMbid(store: Store, mbid: string): CurrentRow | undefined {
  const raw = cachedStatement(
    store,
    `SELECT ${CURRENT_COLUMNS} FROM current_state s LEFT JOIN changes c ON c.id = s.change_id WHERE s.mbid = ?`,
  ).get(mbid) as RawCurrentRow | undefined;
  return raw && currentRowOf(raw);
}

/**
 * The current state of each of `mbids` (lower case) in one statement, in the order given;
 * undefined where not held. Duplicates answer the same row.
 */
export function currentOfMbids(store: Store, mbids: readonly string[]): (CurrentRow | undefined)[] {
  if (mbids.length === 0) return [];
  const rows = cachedStatement(
    store,
    `SELECT ${CURRENT_COLUMNS} FROM current_state s LEFT JOIN changes c ON c.id = s.change_id
     WHERE s.mbid IN (SELECT value FROM json_each(?))`,
  ).all(JSON.stringify(mbids)) as RawCurrentRow[];
  const byMbid = new Map(rows.map((raw) => [raw.mbid, currentRowOf(raw)]));
  return mbids.map((mbid) => byMbid.get(mbid));
}

/** Number of MBIDs held in the current state, per status. */
export function currentCounts(store: Store): Record<CurrentStatus, number> {
  const counts: Record<CurrentStatus, number> = { CURRENT: 0, DELETED: 0, MERGED: 0 };
  const rows = store.sqlite
    .prepare('SELECT status, count(*) AS n FROM current_state GROUP BY status')
    .all() as { status: CurrentStatus; n: number }[];
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

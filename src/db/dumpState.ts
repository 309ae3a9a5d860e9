import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { cachedStatement } from './statements.js';

/** Where the JSON dump of one entity type for a synced packet stands (see {@link jsonDumpState}). */
export interface JsonDumpState {
  /** SYNCED | NO_CHANGES | PENDING | FAILED; null when the packet has no `dumps` row of the type. */
  status: string | null;
  /** Why it FAILED; else null. */
  error: string | null;
  /** Lines stored as changes; null without a `dumps` row. */
  changeCount: number | null;
}

/**
 * The statement of {@link jsonDumpState}, written once for both stores (`?` parameters: entity
 * type, packet): no row when the packet is not synced here, a row of nulls when it is but the
 * entity type has no `dumps` row. One primary key seek in each table.
 */
export const JSON_DUMP_STATE_SQL = `SELECT d.status, d.error, d.change_count AS "changeCount"
  FROM packets p LEFT JOIN dumps d ON d.packet = p.number AND d.entity = ?
  WHERE p.number = ?`;

/**
 * The state of the JSON dump (packet, entity) on a SQLite store, or undefined when this instance
 * has not synced `packet` (no `packets` row): what `changes(packet, entity)` checks before paging
 * (graphql/types/entityChange.ts `checkDumpReadable`).
 */
export function jsonDumpState(store: Store, packet: number, entity: EntityType): JsonDumpState | undefined {
  return cachedStatement(store, JSON_DUMP_STATE_SQL).get(entity, packet) as JsonDumpState | undefined;
}

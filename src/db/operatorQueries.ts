import type { EntityType } from '../feed/entities.js';
import type { Store } from './client.js';
import { cachedStatement, limitClause } from './statements.js';

/**
 * Queries behind the operator's views of what went wrong (issue 5): quarantined lines and files
 * that failed. Keyset pagination: callers pass the key of the last row seen.
 */

/** A `quarantine` row: a JSON dump line that could not be stored as a change. */
export interface QuarantineRow {
  packet: number;
  entity: EntityType;
  /** 1-based line number in `mbdump/<entity>`. */
  line: number;
  /** The line exactly as received. */
  raw: string;
  reason: string;
}

/** Position of a quarantined line in the order (packet, entity, line). */
export interface QuarantineKey {
  packet: number;
  entity: string;
  line: number;
}

/** Optional filters of the quarantine. */
export interface QuarantineFilter {
  packet?: number;
  entity?: EntityType;
}

/**
 * The WHERE clause of `filter` (`?` parameters, for both stores) and its parameters. `TRUE`, not
 * `1`: PostgreSQL wants a boolean.
 */
export function quarantineWhere(filter: QuarantineFilter): { sql: string; params: (string | number)[] } {
  const terms: string[] = [];
  const params: (string | number)[] = [];
  if (filter.packet !== undefined) {
    terms.push('packet = ?');
    params.push(filter.packet);
  }
  if (filter.entity !== undefined) {
    terms.push('entity = ?');
    params.push(filter.entity);
  }
  return { sql: terms.length ? terms.join(' AND ') : 'TRUE', params };
}

// Replication packets sort before the JSON dumps of their packet (entity '' in the key).
const FAILURES = `
  SELECT packet, status, entity, file_name AS "fileName", error, attempts, next_retry_at AS "nextRetryAt",
         updated_at AS "updatedAt", entity AS "sortEntity"
  FROM dumps WHERE status = 'FAILED'
  UNION ALL
  SELECT packet, status, NULL, file_name, error, attempts, next_retry_at, updated_at, ''
  FROM replication_packets WHERE status IN ('FAILED', 'PENDING', 'MISSING')`;

/**
 * The statements of the operator's views with `?` parameters, written once for SQLite (below) and
 * PostgreSQL (db/postgres/ledgerReads.ts); a page's `LIMIT` is appended by each store. Keys from
 * cursors are compared as bigint (a cursor may hold more than PostgreSQL's 32-bit columns). Entity
 * type names sort alike in every collation (lower-case letters; `release` before `release-group`),
 * so the text keys need no COLLATE on PostgreSQL, whose databases may use a language's collation.
 */
export const OPERATOR_SQL = {
  /** (filter params..., packet, entity, line) → QuarantineRow; `where` from {@link quarantineWhere}. */
  quarantinePage: (where: string) =>
    `SELECT packet, entity, line, raw, reason FROM quarantine
     WHERE ${where} AND (packet, entity, line) > (CAST(? AS bigint), ?, CAST(? AS bigint))
     ORDER BY packet, entity, line`,
  /** (filter params...) → n. */
  quarantineCount: (where: string) => `SELECT count(*) AS n FROM quarantine WHERE ${where}`,
  /** (packet, sort entity) → FailureRow. */
  failuresPage: `SELECT packet, status, entity, "fileName", error, attempts, "nextRetryAt", "updatedAt"
     FROM (${FAILURES}) AS failures
     WHERE (packet, "sortEntity") > (CAST(? AS bigint), ?) ORDER BY packet, "sortEntity"`,
  /** () → n. */
  failureCount: `SELECT count(*) AS n FROM (${FAILURES}) AS failures`,
};

/** Where a keyset page of the quarantine starts: after `after`, else before every line. */
export function quarantineStart(after: QuarantineKey | undefined): (string | number)[] {
  return after ? [after.packet, after.entity, after.line] : [-1, '', 0];
}

/** Where a keyset page of the failures starts: after `after`, else before every file. */
export function failuresStart(after: { packet: number; entity: string } | undefined): (string | number)[] {
  return after ? [after.packet, after.entity] : [-1, ''];
}

/** Up to `limit` quarantined lines after `after`, ordered by packet, entity type, line. */
export function quarantinePage(
  store: Store,
  filter: QuarantineFilter,
  after: QuarantineKey | undefined,
  limit: number,
): QuarantineRow[] {
  const where = quarantineWhere(filter);
  return cachedStatement(store, `${OPERATOR_SQL.quarantinePage(where.sql)} ${limitClause(limit)}`).all(
    ...where.params,
    ...quarantineStart(after),
  ) as QuarantineRow[];
}

/** Number of quarantined lines matching `filter`. */
export function quarantineCount(store: Store, filter: QuarantineFilter): number {
  const where = quarantineWhere(filter);
  return (
    cachedStatement(store, OPERATOR_SQL.quarantineCount(where.sql)).get(...where.params) as { n: number }
  ).n;
}

/** A file that failed: a JSON dump (entity set) or a replication packet (entity null). Times ISO 8601. */
export interface FailureRow {
  packet: number;
  /**
   * FAILED (retried); or for a replication packet the feed answers 404 for although
   * replication-info lists it: PENDING (asked again with backoff) or MISSING (still 404 an hour
   * on, with a later packet stored; still asked again).
   */
  status: 'FAILED' | 'PENDING' | 'MISSING';
  entity: EntityType | null;
  /** Feed-root-relative name when known. */
  fileName: string | null;
  error: string | null;
  attempts: number;
  nextRetryAt: string | null;
  updatedAt: string;
}

/** Up to `limit` FAILED files (and PENDING or MISSING replication packets) after (`packet`, `entity` or '' for the replication packet), in that order. */
export function failuresPage(
  store: Store,
  after: { packet: number; entity: string } | undefined,
  limit: number,
): FailureRow[] {
  return cachedStatement(store, `${OPERATOR_SQL.failuresPage} ${limitClause(limit)}`).all(
    ...failuresStart(after),
  ) as FailureRow[];
}

/** Number of FAILED JSON dumps and FAILED, PENDING or MISSING replication packets. */
export function failureCount(store: Store): number {
  return (cachedStatement(store, OPERATOR_SQL.failureCount).get() as { n: number }).n;
}

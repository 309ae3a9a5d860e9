import type { EntityType } from '../feed/entities.js';

/** The row of one archive: a JSON dump (`dumps`, keyed by packet and entity type) or a replication packet. */
export type FileKey = { packet: number; entity: EntityType } | { packet: number; entity?: undefined };

/** Where a {@link FileKey}'s row lives, to write into SQL: table, key columns, WHERE clause and its arguments. */
export interface FileRow {
  table: 'dumps' | 'replication_packets';
  /** Key columns, comma-separated, in the order of `args`. */
  keys: string;
  /** `packet = ? AND entity = ?` or `packet = ?`. */
  where: string;
  args: (number | string)[];
}

/**
 * The row of `file`. Both tables share their bookkeeping columns (status, error, attempts,
 * next_retry_at, signature_missing_since, updated_at), so each statement over them is written once
 * with the table and key filled in here.
 */
export function fileRow(file: FileKey): FileRow {
  return file.entity === undefined
    ? { table: 'replication_packets', keys: 'packet', where: 'packet = ?', args: [file.packet] }
    : {
        table: 'dumps',
        keys: 'packet, entity',
        where: 'packet = ? AND entity = ?',
        args: [file.packet, file.entity],
      };
}

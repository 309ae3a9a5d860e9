/**
 * Members of a replication packet archive (FEED.md, Replication packet archives) and how each is
 * read. Anything else is refused: an archive is never written to disk, and a member this code does
 * not know could hold rows it would otherwise drop.
 */

import { ArchiveError } from '../errors.js';
import {
  parseDbmirrorPendingDataLine,
  parseDbmirrorPendingLine,
  parsePendingDataLine,
  parsePendingKeysLine,
  parsePendingTsLine,
} from './lines.js';
import type { ReplicationSink } from './types.js';

/** Metadata members with the most bytes each may hold. */
export const METADATA_MEMBERS: Readonly<Record<string, number>> = {
  TIMESTAMP: 256,
  COPYING: 64 * 1024,
  README: 64 * 1024,
  REPLICATION_SEQUENCE: 64,
  SCHEMA_SEQUENCE: 64,
  DBMIRROR_VERSION: 64,
};

/** Which sink method receives a data member's lines. */
export type DataMemberKind = keyof ReplicationSink;

/** Data members by archive name; v1 has two spellings (very old packets: `Pending`, `PendingData`). */
export const DATA_MEMBERS: Readonly<Record<string, DataMemberKind>> = {
  'mbdump/pending_data': 'pendingData',
  'mbdump/pending_keys': 'pendingKeys',
  'mbdump/pending_ts': 'pendingTs',
  'mbdump/dbmirror_pending': 'v1Pending',
  'mbdump/Pending': 'v1Pending',
  'mbdump/dbmirror_pendingdata': 'v1PendingData',
  'mbdump/PendingData': 'v1PendingData',
};

/** Kinds that belong to each format. */
export const V2_KINDS: ReadonlySet<DataMemberKind> = new Set(['pendingData', 'pendingKeys', 'pendingTs']);

/** How one member is read. */
export type MemberRole =
  | { role: 'skip' }
  | { role: 'metadata'; limit: number }
  | { role: 'data'; kind: DataMemberKind };

/**
 * Decides how to read the tar member `name` of type `type` (tar-stream header type). The `mbdump`
 * directory entry is skipped; a leading `./` is ignored.
 * @throws ArchiveError (prefixed with `where`) naming the member when it is not a known metadata
 *   file, not a known `mbdump/` data file, or not a regular file.
 */
export function memberRole(name: string, type: string | null | undefined, where: string): MemberRole {
  const path = name.startsWith('./') ? name.slice(2) : name;
  if (type === 'directory' && (path === 'mbdump' || path === 'mbdump/')) return { role: 'skip' };
  const limit = METADATA_MEMBERS[path];
  const kind = DATA_MEMBERS[path];
  if ((limit === undefined && kind === undefined) || type !== 'file') {
    throw new ArchiveError(
      `${where}: unexpected member ${JSON.stringify(name)} (${type ?? 'unknown type'}); a replication packet holds only ` +
        `${Object.keys(METADATA_MEMBERS).join(', ')} and ${Object.keys(DATA_MEMBERS).join(', ')}`,
    );
  }
  return limit !== undefined ? { role: 'metadata', limit } : { role: 'data', kind: kind! };
}

/** Line handler of each data member kind: parse, then hand the record to the sink. */
export function lineHandlers(
  sink: ReplicationSink,
): Record<DataMemberKind, (text: string, line: number) => void> {
  return {
    pendingData: (text, line) => sink.pendingData(parsePendingDataLine(text), line),
    pendingKeys: (text, line) => sink.pendingKeys(parsePendingKeysLine(text), line),
    pendingTs: (text, line) => sink.pendingTs(parsePendingTsLine(text), line),
    v1Pending: (text, line) => sink.v1Pending(parseDbmirrorPendingLine(text), line),
    v1PendingData: (text, line) => sink.v1PendingData(parseDbmirrorPendingDataLine(text), line),
  };
}
